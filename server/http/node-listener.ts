/**
 * The app on a node:http server: @hono/node-server's listener, behind a check of what it cannot turn
 * into a Request (no Host, as HTTP/1.0 allows; an asterisk or absolute target such as `GET *`), which
 * are answered in the shared error shape like every other refusal. Given the app's fast path
 * (`app.pix.fastPath`, http/fast-read.ts), it answers the fresh status reads it can before the app.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { errorBody } from '../../src/shared/errors.ts';
import type { FastPath } from './fast-read.ts';

export function nodeListener(fetch: Parameters<typeof getRequestListener>[0], fast?: FastPath): RequestListener {
  const handle = getRequestListener(fetch);
  return (req, res) => {
    if (!req.headers.host || !req.url?.startsWith('/')) {
      const body = JSON.stringify(errorBody('invalid_request', 'The request needs a Host header and a path starting with /.'));
      res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
      return;
    }
    if (fast?.(req, res)) return;
    void handle(req, res);
  };
}

/** A node:http server for the app; a missing Host reaches nodeListener instead of Node's bare 400. */
export function createNodeServer(listener?: RequestListener): Server {
  return createServer({ requireHostHeader: false }, listener);
}
