/**
 * The house's layering, checked by `npm run lint` (dependency-cruiser): a wrong import fails the
 * build. The rooms are described in the README's layout section.
 */
const SERVER_ROOT_COMPOSITION = '^server/(app|services|proxy|main|dev-stack|sandbox-mode|index)\\.ts$';
/** An aggregate's statements for one database (server/store/payments/sqlite.ts...): only the stores compose them. */
const STORE_IMPLEMENTATIONS = '^server/store/[a-z-]+/(sqlite|postgres)\\.ts$';
/** The pure money rules both the domain and the stores call (the stores inside their transactions): a room below both. */
const MONEY_RULES = '^server/money/';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'No import circle, anywhere.', from: {}, to: { circular: true } },
    {
      name: 'browser-imports-no-server',
      severity: 'error',
      comment: 'The browser package (src/) never reaches into the server.',
      from: { path: '^src/' },
      to: { path: '^(server|demo|test|bench|scripts)/' },
    },
    {
      name: 'shared-is-a-leaf',
      severity: 'error',
      comment: 'src/shared is imported by browser and server alike: it imports only itself and zod.',
      from: { path: '^src/shared/' },
      to: { path: '^(src/(?!shared/)|server/)|node:' },
    },
    {
      name: 'domain-below-http',
      severity: 'error',
      comment: 'The domain never imports HTTP, routes, the composition, the command line or the sandbox.',
      from: { path: '^server/domain/' },
      to: { path: [`^server/(http|routes|cli|sandbox|store/sqlite|store/postgres)/`, STORE_IMPLEMENTATIONS, SERVER_ROOT_COMPOSITION] },
    },
    {
      name: 'domain-does-not-read-config',
      severity: 'error',
      comment: 'Settings are resolved once, by the composition: the domain takes its numbers as options and never reads the configuration.',
      from: { path: '^server/domain/' },
      to: { path: '^server/config/' },
    },
    {
      name: 'store-builds-nothing',
      severity: 'error',
      comment:
        "The store persists what it is given: no domain (the money rules it calls in its transactions live below both, in server/money/), HTTP, configuration (its numbers are the caller's options) or composition; of the partner room, only the token store type. Domain and store import each other one way only.",
      from: { path: '^server/store/' },
      to: {
        path: [`^server/(domain|http|routes|cli|sandbox|config)/`, '^server/partner/(?!token-store\\.ts)', SERVER_ROOT_COMPOSITION],
      },
    },
    {
      name: 'money-rules-are-pure',
      severity: 'error',
      comment: 'The money rules both stores call (refunds, the payout-transfer link, final states) are pure: types of the store and src/shared, nothing else.',
      from: { path: MONEY_RULES },
      to: { path: '^(?!src/shared/|server/money/|server/store/(store|[a-z-]+/types)\\.ts$)' },
    },
    {
      name: 'money-below-the-store-at-run-time',
      severity: 'error',
      comment:
        "The money rules take the store's record types only (erased at run time): at run time server/money/ imports nothing of the store or the domain, both of which import it.",
      from: { path: MONEY_RULES },
      to: { path: '^server/(store|domain)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'partner-is-self-contained',
      severity: 'error',
      comment: 'The partner client speaks the wire format and knows nothing of the proxy.',
      from: { path: '^server/partner/' },
      to: { path: [`^server/(domain|http|routes|cli|sandbox|store)/`, '^server/config/', SERVER_ROOT_COMPOSITION] },
    },
    {
      name: 'http-below-routes',
      severity: 'error',
      comment: 'HTTP plumbing serves the routes; of the domain and the store it knows only the errors it maps.',
      from: { path: '^server/http/' },
      to: { path: [`^server/(routes|cli|sandbox)/`, '^server/store/(?!store\\.ts)', '^server/domain/(?!errors\\.ts)', SERVER_ROOT_COMPOSITION] },
    },
    {
      name: 'routes-are-not-composition',
      severity: 'error',
      comment: 'Routes take their services; they never build the app or reach the store directly or the sandbox.',
      from: { path: '^server/routes/' },
      to: { path: [`^server/(cli|sandbox|store/sqlite|store/postgres)/`, STORE_IMPLEMENTATIONS, SERVER_ROOT_COMPOSITION] },
    },
    {
      name: 'routes-do-not-import-store',
      severity: 'error',
      comment: 'Routes speak HTTP to domain services: what they need of the store (the webhook intake, a payment) sits behind a service.',
      from: { path: '^server/routes/' },
      to: { path: '^server/store/' },
    },
    {
      name: 'config-is-a-leaf',
      severity: 'error',
      comment:
        "Settings import only the shared rules, the partner wire format they validate against, the status numbering they parse, the partner client's defaults, and the merchant webhook secrets' form (domain/signature.ts).",
      from: { path: '^server/config/' },
      to: {
        path: '^server/(?!config/|partner/(wire|sandbox-account|client|errors|http|token-store|read|status-codes)\\.ts|domain/signature\\.ts)',
      },
    },
    {
      name: 'sandbox-stands-alone',
      severity: 'error',
      comment: 'The sandbox imports src/shared and the partner wire format only, as a separate service would.',
      from: { path: '^server/sandbox/' },
      to: { path: '^server/(?!sandbox/|partner/(wire|sandbox-account)\\.ts)' },
    },
    {
      name: 'only-sandbox-mode-starts-the-sandbox',
      severity: 'error',
      comment: 'Nothing in the proxy imports the sandbox except sandbox mode (server/sandbox-mode.ts).',
      from: { path: '^server/', pathNot: '^server/(sandbox/|sandbox-mode\\.ts$)' },
      to: { path: '^server/sandbox/' },
    },
    {
      name: 'merchant-speaks-http',
      severity: 'error',
      comment:
        "What the merchant's own server imports (server/merchant/) reaches the proxy over HTTP only: src/shared and the webhook signature, nothing of the proxy's insides.",
      from: { path: '^server/merchant/' },
      to: { path: '^server/(?!merchant/|domain/signature\\.ts$)' },
    },
    {
      name: 'demo-uses-the-package-entries',
      severity: 'error',
      comment: "The demo is a merchant's app: it imports the package's entries only.",
      from: { path: '^demo/' },
      to: { path: '^(server|src)/', pathNot: '^(server/(index|dev-stack|ssr/render)\\.ts|src/shared/index\\.ts)$' },
    },
    {
      name: 'only-ssr-renders-the-widget',
      severity: 'error',
      comment:
        "The server reaches the widget's code (beyond src/shared) only to render it (server/ssr/, the pix-checkout-server/render entry); the proxy loads that renderer on demand only (next rule): a proxy whose pages never ask for a first screen loads no Lit.",
      from: { path: '^server/(?!ssr/)' },
      to: { path: '^(src/(?!shared/)|server/ssr/)', dependencyTypesNot: ['dynamic-import'] },
    },
    {
      name: 'the-app-alone-loads-the-renderer',
      severity: 'error',
      comment: "The proxy's app loads the renderer when a page's head first asks for a payment's first screen (server/app.ts), nothing else in the proxy does.",
      from: { path: '^server/(?!ssr/|app\\.ts$)' },
      to: { path: '^(src/(?!shared/)|server/ssr/)', dependencyTypes: ['dynamic-import'] },
    },
    {
      name: 'bench-and-scripts-apart',
      severity: 'error',
      comment: 'bench/ and scripts/ share helpers through test/support, never each other.',
      from: { path: '^(bench|scripts)/' },
      to: { path: '^(bench|scripts)/', pathNot: '$1' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|lib|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mts', '.mjs', '.js'] },
  },
};
