/**
 * Node's `ServerResponse` objects laid out once, at startup, from responses built as the server
 * builds them, so that one garbage collection early in the process's life cannot leave every later
 * response in dictionary mode.
 *
 * V8 sizes a constructor's objects after its first seven constructions (in-object slack tracking):
 * the seventh takes the largest shape among the maps of the first six still in the heap
 * (`MapUpdater::CompleteInobjectSlackTracking`, `Map::ComputeMinObjectSlack`). A full collection
 * between the sixth response and the seventh, with none of them alive, clears those maps: the
 * seventh finds none and fixes the response at no in-object fields, and V8 turns each response into a
 * dictionary as its fields are added. Every response of the process then holds its fields (44 on Node
 * 20) in a hash table (3,136 B, where in the object they take 352), which a status stream keeps for as
 * long as its client stays. Without this, `bench:sse` meets it on every run: its collection before the
 * clients connect comes right after the process's sixth response.
 *
 * Here enough responses go through Node's own server path in one synchronous run, all held until the
 * last, that the count is passed with their maps alive: the layout is then the real one whatever the
 * collector does later. No socket or port: each request is handed to the server on an in-memory
 * stream, and all of it is released before this returns.
 */
import { Server, type ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';

/** Constructions made at once: V8 fixes the layout at the seventh; the rest is margin (the run takes a few ms). */
export const RESPONSES = 16;

/** A path that says what it is, should a tracer hooked into Node's server (its diagnostics channel) see these. */
const REQUEST = Buffer.from('GET /startup/response-layout HTTP/1.1\r\nHost: localhost\r\n\r\n', 'latin1');

/**
 * Builds `RESPONSES` node:http responses, each given a head as the status stream's, and releases
 * them. Returns how many the server handed over (all of them, unless Node's server path changed).
 */
export function completeResponseLayout(): number {
  const held: ServerResponse[] = [];
  const sockets: Duplex[] = [];
  const server = new Server((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.flushHeaders();
    held.push(response);
  });
  try {
    for (let i = 0; i < RESPONSES; i++) {
      const socket = new Duplex({
        read() {},
        write(_chunk, _encoding, callback) {
          callback();
        },
      });
      sockets.push(socket);
      server.emit('connection', socket);
      // The server reads the request from this event, synchronously: the responses are built in this run.
      socket.emit('data', REQUEST);
    }
  } finally {
    for (const socket of sockets) socket.destroy();
  }
  return held.length;
}
