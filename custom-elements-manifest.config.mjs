/**
 * `cem analyze` (run by `npm run build`): custom-elements.json from the element's JSDoc header and
 * its properties, for IDEs and docs tools (package.json `customElements`).
 */

/**
 * The analyzer's Lit support reads `static properties` but not `state: true`: internal reactive
 * state (protected fields) is not an attribute. And the `@fires` tags name each event; the event
 * class (`pix-copy` -> PixCopyEvent in src/events.ts) gives its type, while the entries the analyzer
 * guesses from `dispatchEvent(...)` calls (no name, or the word `detail`) are dropped.
 */
/** The analyzed sources and the published modules that hold them (src/ is not in the package). */
const PUBLISHED = {
  'src/pix-checkout.ts': 'dist/npm/element.js',
  'src/events.ts': 'dist/npm/element.js',
  'src/element.ts': 'dist/npm/element.js',
  'src/define.ts': 'dist/npm/index.js',
};
const published = (path) => PUBLISHED[path.replace(/^\//, '')] ?? path;

function pixCheckoutPlugin() {
  return {
    name: 'pix-checkout',
    packageLinkPhase({ customElementsManifest }) {
      const eventClasses = new Set(
        customElementsManifest.modules.flatMap((mod) => (mod.declarations ?? []).filter((d) => d.kind === 'class' && /Event$/.test(d.name)).map((d) => d.name)),
      );
      for (const mod of customElementsManifest.modules) {
        // Module paths name the files a tool can open in the installed package.
        mod.path = published(mod.path);
        for (const ref of [...(mod.exports ?? []).map((e) => e.declaration), ...(mod.declarations ?? []).map((d) => d.superclass)]) {
          if (ref?.module) ref.module = published(ref.module);
        }
        for (const element of mod.declarations ?? []) {
          if (!element.customElement) continue;
          const internal = new Set((element.members ?? []).filter((m) => m.privacy === 'protected' || m.privacy === 'private').map((m) => m.name));
          element.attributes = (element.attributes ?? []).filter((a) => !internal.has(a.fieldName));
          for (const member of element.members ?? []) if (internal.has(member.name)) delete member.attribute;
          element.events = (element.events ?? [])
            .filter((event) => event.name?.startsWith('pix-'))
            .map((event) => {
              const type = event.name.replace(/(^|-)([a-z])/g, (_, __, c) => c.toUpperCase()) + 'Event';
              return eventClasses.has(type) ? { ...event, type: { text: type } } : event;
            });
        }
      }
      // The element and its events are one published module: one entry for it.
      const byPath = new Map();
      for (const mod of customElementsManifest.modules) {
        const first = byPath.get(mod.path);
        if (!first) byPath.set(mod.path, mod);
        else {
          first.declarations = [...(first.declarations ?? []), ...(mod.declarations ?? [])];
          first.exports = [...(first.exports ?? []), ...(mod.exports ?? [])];
        }
      }
      customElementsManifest.modules = [...byPath.values()];
    },
  };
}

export default {
  globs: ['src/pix-checkout.ts', 'src/events.ts', 'src/define.ts'],
  outdir: '.',
  litelement: true,
  packagejson: false,
  plugins: [pixCheckoutPlugin()],
};
