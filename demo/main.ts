/**
 * `npm start`: the sandbox, the proxy and the demo page in one process, no credentials needed.
 * Open the printed URL; Ctrl-C stops everything.
 */
import { serveStatic } from '@hono/node-server/serve-static';
import { startDevStack, type DevStack } from '../server/dev.ts';

const requested = Number(process.env.PORT ?? 8787);

async function start(port: number): Promise<DevStack> {
  return startDevStack({
    port,
    mount(app) {
      app.get('/', serveStatic({ path: './demo/index.html' }));
      app.get('/dist/*', serveStatic({ root: './' }));
    },
  });
}

let stack: DevStack;
try {
  stack = await start(requested);
} catch (error) {
  if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
  console.warn(`Port ${requested} is busy; using a free one instead (set PORT to choose).`);
  stack = await start(0);
}

const pageUrl = stack.url.replace('127.0.0.1', 'localhost');
console.log(`pix-checkout demo: open ${pageUrl}
  proxy API:  ${pageUrl}/api   (widget endpoint)
  sandbox:    ${stack.sandbox.url}   (partner service simulator, HTTPS)
Ctrl-C to stop.`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    console.log('\nStopping…');
    void stack.close().then(() => process.exit(0));
  });
}
