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

/** The most of an answer read: the service's answers are small JSON; a huge one is cut off, not buffered. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * One HTTPS exchange with a whole-request deadline. node:https rather than fetch because the sandbox
 * certificate must be trusted per client (`ca`), which Node's global fetch cannot do without undici.
 */
export function httpsExchange(agent: Agent, req: HttpRequest): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(req.url, { method: req.method, headers: req.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) {
          clearTimeout(timer);
          res.destroy();
          reject(Object.assign(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`), { code: 'ANSWER_TOO_LARGE' }));
          return;
        }
        chunks.push(chunk);
      });
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
