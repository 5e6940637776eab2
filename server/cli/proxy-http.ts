/**
 * The commands that speak to a running proxy over its HTTP API with the merchant's API key
 * (`report`, `listen`): where it is and the key. The key travels only in the Authorization header; it
 * is never printed, nor put in an error message.
 */
import { isErrorBody } from '../../src/shared/wire.ts';
import { SANDBOX_API_KEY, readSettings } from '../config/index.ts';
import { UsageError, type CliIo } from './io.ts';

export interface ProxyTarget {
  /** The API's base, such as http://localhost:8787/api. */
  api: string;
  apiKey: string;
}

export const PROXY_OPTIONS = { proxy: { type: 'string' }, 'api-key': { type: 'string' } } as const;

export const PROXY_HELP = `  --proxy <url>     the proxy's API base (PIX_PROXY_URL; default http://localhost:<PORT or 8787>/api,
                    the proxy pix-checkout serve runs, in sandbox mode too)
  --api-key <key>   the merchant's API key (PIX_API_KEY; in sandbox mode the published test key)`;

/** Where the proxy is and the key, from the options, then the environment, then the sandbox's defaults. */
export function proxyTarget(values: { proxy?: string | undefined; 'api-key'?: string | undefined }, env: CliIo['env']): ProxyTarget {
  const api = (values.proxy ?? env.PIX_PROXY_URL ?? `http://localhost:${localPort(env)}/api`).replace(/\/+$/, '');
  try {
    const url = new URL(api);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new UsageError(`--proxy must be the proxy's API base URL, such as http://localhost:8787/api`);
  }
  const sandbox = env.PIX_BASE_URL === undefined && env.PIX_EMAIL === undefined && env.PIX_ACCESS_KEY === undefined && env.PIX_TOKEN === undefined;
  const apiKey = values['api-key'] ?? env.PIX_API_KEY ?? (sandbox ? SANDBOX_API_KEY : undefined);
  if (!apiKey) throw new UsageError('the merchant API key is needed: --api-key or PIX_API_KEY');
  return { api, apiKey };
}

/** PORT as the proxy reads it (its default when unset); one it would refuse is a usage error here too. */
function localPort(env: CliIo['env']): number {
  const { values, problems } = readSettings(env, ['PORT']);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return values.PORT;
}

/** The proxy's refusal as one sentence (its error body's code and message), for an answer that is not 2xx. */
export async function refusalOf(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body: unknown = JSON.parse(text);
    if (isErrorBody(body)) {
      const fields = Object.entries(body.error.fields ?? {}).map(([field, problem]) => `${field} ${problem}`);
      return `${res.status} ${body.error.code}: ${body.error.message}${fields.length > 0 ? ` (${fields.join('; ')})` : ''}`;
    }
  } catch {
    // Not JSON: the status says it.
  }
  return `${res.status} ${res.statusText}`.trim();
}
