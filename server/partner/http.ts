import { Agent, request } from 'node:https';

export interface HttpResponse {
  status: number;
  body: string;
}

export interface HttpRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

export class HttpTimeoutError extends Error {
  override readonly name = 'HttpTimeoutError';
}

/**
 * One HTTPS exchange with a whole-request deadline. node:https rather than fetch because the sandbox
 * certificate must be trusted per client (`ca`), which Node's global fetch cannot do without undici.
 */
export function httpsExchange(agent: Agent, req: HttpRequest): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(req.url, { method: req.method, headers: req.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    const timer = setTimeout(() => outgoing.destroy(new HttpTimeoutError(`no answer within ${req.timeoutMs} ms`)), req.timeoutMs);
    outgoing.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    outgoing.end(req.body);
  });
}
