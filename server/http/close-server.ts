import type { Server } from 'node:http';

/**
 * Stops accepting, lets in-flight requests finish (idle keep-alive connections close at once),
 * and after `graceMs` cuts whatever is left; `null`: never (the caller has a deadline of its own).
 */
export async function closeServer(server: Server, graceMs: number | null = 5000): Promise<void> {
  await new Promise<void>((resolve) => {
    const cut = graceMs === null ? undefined : setTimeout(() => server.closeAllConnections(), graceMs);
    cut?.unref();
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}
