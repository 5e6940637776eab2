/**
 * `npm start`: the sandbox, the proxy, the demo store and its backend in one process, no credentials
 * needed (demo/server.ts). Open the printed URL; Ctrl-C stops everything.
 */
import { startDemo, type RunningDemo } from './server.ts';

const requested = Number(process.env.PORT ?? 8787);

let demo: RunningDemo;
try {
  demo = await startDemo({ port: requested });
} catch (error) {
  if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
  console.warn(`Port ${requested} is busy; using a free one instead (set PORT to choose).`);
  demo = await startDemo({ port: 0 });
}

const pageUrl = demo.url.replace('127.0.0.1', 'localhost');
console.log(`pix-checkout demo: open ${pageUrl}
  store:      ${pageUrl}/            (test panel on: sandbox)
  playground: ${pageUrl}/#playground
  proxy API:  ${pageUrl}/api   (widget endpoint)
  sandbox:    ${demo.stack.sandbox.url}   (partner service simulator, HTTPS)
Ctrl-C to stop.`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    console.log('\nStopping…');
    void demo.close().then(() => process.exit(0));
  });
}
