// ESLint: typescript-eslint's type-aware rules (floating promises, unsafe any, misused promises) on
// every TypeScript file, with Prettier owning the layout. Layering and import circles are checked
// by dependency-cruiser (.dependency-cruiser.cjs); `npm run lint` runs all three.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** A source file's most lines: past it a file does more than one job (split it by job, not by line count). */
export const MAX_LINES = 400;

/**
 * Files allowed past MAX_LINES, each with its reason: data, read as a table, or a split finishing on
 * another branch (those entries go when it merges). test/node/docs/source-limits.test.ts fails on an
 * entry whose file is gone or back under the limit.
 */
export const LINE_LIMIT_EXCEPTIONS = {
  'server/config/settings.ts': 'data: the settings table, one entry per environment variable',
};

/** Names an issue: `issue 27`, `Issue #30`, `(issue 41)`, `issues 26`, `(#12)`, or `issue` and its number on two lines of a JSDoc block. */
export const ISSUE_NUMBER = /\bissues?[\s*]*#?\d+|\(#\d+\)/i;

/** The house's own rules. */
export const house = {
  rules: {
    'no-issue-numbers': {
      meta: {
        type: 'suggestion',
        docs: { description: 'Comments say why in the present tense and name no issue: the history is in git, the CHANGELOG and docs.' },
        schema: [],
      },
      create(context) {
        return {
          Program() {
            for (const comment of context.sourceCode.getAllComments()) {
              const found = ISSUE_NUMBER.exec(comment.value);
              // Reported on the line that names it, in a comment of many lines.
              const line = found ? comment.loc.start.line + comment.value.slice(0, found.index).split('\n').length - 1 : 0;
              if (found)
                context.report({
                  loc: { line, column: 0 },
                  message: `A comment names an issue ("${found[0]}"): say why, in the present tense (the history is in git).`,
                });
            }
          },
        };
      },
    },
  },
};

export default tseslint.config(
  {
    ignores: ['dist/', 'lib/', 'node_modules/', '.browsers/', 'screenshots/', 'custom-elements.json', 'test/e2e/package-fixture/', '.dependency-cruiser.cjs'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test's test() and describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', name: ['test', 'describe', 'it', 'suite'], package: 'node:test' }] },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // A `let` read by a closure before its one assignment (a late-bound server, a timer) stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // TypeScript itself reports undefined names.
      'no-undef': 'off',
      // An async interface may be implemented synchronously (the SQLite store, memory token stores).
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read JSON answers and event details (typed any) and assert on them: a wrong shape fails
    // the assertion.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // semantic-dom-diff types chai's `equal` (Chai.Equal) as possibly returning a promise, for its DOM
    // comparison; the value comparisons the tests make are synchronous. `accessible()` is still checked.
    files: ['test/browser/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'file', name: ['Equal'], path: 'node_modules/@open-wc/semantic-dom-diff/chai-dom-diff-plugin.d.ts' }] },
      ],
      // `expect(x).to.be.true` is how chai asserts.
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
  {
    // Time and chance reach the domain and the partner client only through their runtime
    // (server/runtime/runtime.ts, handed down by createServices): a call of the globals would
    // escape the simulation's clock and seed, unseen. Key material (a cipher's nonce, a new
    // webhook secret) stays the operating system's, each allowed where it is drawn.
    files: ['server/domain/**/*.ts', 'server/partner/**/*.ts'],
    ignores: ['server/partner/http.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'fetch'].map((name) => ({
          name,
          message: "Use the runtime's clock or fetch (server/runtime/runtime.ts), which createServices hands down.",
        })),
      ],
      'no-restricted-syntax': [
        'error',
        ...['Date', 'performance', 'Math', 'crypto'].flatMap((object) =>
          (object === 'Math' ? ['random'] : object === 'crypto' ? ['randomUUID', 'getRandomValues'] : ['now']).map((property) => ({
            selector: `MemberExpression[object.name='${object}'][property.name='${property}']`,
            message: `${object}.${property} escapes the runtime: use its clock or random source (server/runtime/runtime.ts).`,
          })),
        ),
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: "new Date() reads the real clock: use the runtime's clock." },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'node:crypto', importNames: ['randomUUID', 'randomBytes', 'randomInt'], message: "Use the runtime's random source." },
            { name: 'node:timers', message: "Use the runtime's clock." },
            { name: 'node:timers/promises', message: "Use the runtime's clock." },
            { name: 'node:perf_hooks', message: "Use the runtime's clock." },
          ],
        },
      ],
    },
  },
  // Plain JavaScript (the bin, tool configurations, the demo's pages): no types to check against.
  { files: ['**/*.mjs', '**/*.js'], ...tseslint.configs.disableTypeChecked },
  { files: ['**/*.mjs', '**/*.js'], languageOptions: { globals: { ...globals.node } } },
  { files: ['demo/*.js'], languageOptions: { globals: { ...globals.browser } } },
  {
    // The code a change of behaviour goes through (the widget, the proxy, the command line, the build);
    // a test, bench or demo file is a list of cases, read one case at a time.
    files: ['{src,server,scripts,bin}/**/*.{ts,mts,js,mjs,cjs}'],
    ignores: Object.keys(LINE_LIMIT_EXCEPTIONS),
    rules: { 'max-lines': ['error', { max: MAX_LINES, skipBlankLines: false, skipComments: false }] },
  },
  {
    files: ['{src,server,test,bench,scripts,demo}/**/*.{ts,mts,js,mjs,cjs}'],
    plugins: { house },
    rules: { 'house/no-issue-numbers': 'error' },
  },
  prettier,
);
