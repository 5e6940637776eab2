/**
 * HTTPS only, as production (spec 1, 5): one port where a TLS handshake goes to the HTTPS server and
 * anything else (plain HTTP) gets a refusal, rather than a confusing reset. The first byte of a
 * connection tells them apart: a TLS handshake record starts with 0x16.
 */
import { createServer as createHttpServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';

const TLS_HANDSHAKE = 0x16;
/** A connection that says nothing at all for this long is closed (real ms). */
const SILENT_MS = 30_000;

/** ASSUMPTION (spec 1: plain HTTP "not accepted"): the status and body answered to plain HTTP. */
export const PLAIN_HTTP_REFUSAL = { status: 403, body: { message: 'HTTPS is required.' } } as const;

export interface HttpsOnlyServer {
  port: number;
  close(): Promise<void>;
}

export async function listenHttpsOnly(options: {
  port: number;
  host: string;
  key: string;
  cert: string;
  listener: RequestListener;
  /** The refusal's body, asked for each refused request (the sandbox's dialect words it); default PLAIN_HTTP_REFUSAL's. */
  refusalBody?: () => unknown;
}): Promise<HttpsOnlyServer> {
  const https = createHttpsServer({ key: options.key, cert: options.cert }, options.listener);
  const plain = createHttpServer((req, res) => {
    const refusal = JSON.stringify(options.refusalBody ? options.refusalBody() : PLAIN_HTTP_REFUSAL.body);
    // Drain what was sent, then refuse and hang up.
    req.resume();
    res.writeHead(PLAIN_HTTP_REFUSAL.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(refusal), connection: 'close' });
    res.end(refusal);
  });

  const sockets = new Set<Socket>();
  const front = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(SILENT_MS, () => socket.destroy());
    socket.once('data', (first) => {
      // From here the HTTP(S) server manages the connection's timeouts.
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(first);
      (first[0] === TLS_HANDSHAKE ? https : plain).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });

  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(options.port, options.host, () => resolve());
  });

  return {
    port: (front.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        front.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        https.closeAllConnections();
        plain.closeAllConnections();
      }),
  };
}
