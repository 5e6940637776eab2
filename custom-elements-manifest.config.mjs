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
function pixCheckoutPlugin() {
  return {
    name: 'pix-checkout',
    packageLinkPhase({ customElementsManifest }) {
      const eventClasses = new Set(
        customElementsManifest.modules.flatMap((mod) => (mod.declarations ?? []).filter((d) => d.kind === 'class' && /Event$/.test(d.name)).map((d) => d.name)),
      );
      for (const mod of customElementsManifest.modules) {
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
