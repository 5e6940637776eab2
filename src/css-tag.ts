/**
 * Lit's `@lit/reactive-element/css-tag.js`, as the script-tag bundle carries it (vite.config.ts puts
 * it in place of lit's own there; the npm build, the tests of src/ and the server keep lit's): the
 * same exports, with only what the widget's one `unsafeCSS` result needs. Left out: the `css` tag's
 * check of interpolated values (the widget builds its styles as one string, src/pix-checkout.styles.ts),
 * the sheet shared between results of one template (one result, one sheet), and ShadyCSS (the shadow
 * DOM polyfill of browsers that predate it: the widget runs in none of those). Keep it to lit's
 * css-tag's exports when lit is upgraded; test/browser/bundle.test.ts checks the bundle is styled.
 */

/** The page can adopt constructed stylesheets (else a `<style>` per result, under the page's `litNonce`). */
export const supportsAdoptingStyleSheets: boolean = 'adoptedStyleSheets' in Document.prototype && 'replace' in CSSStyleSheet.prototype;

export type CSSResultOrNative = CSSResult | CSSStyleSheet;

export class CSSResult {
  #sheet: CSSStyleSheet | undefined;
  constructor(readonly cssText: string) {}
  get styleSheet(): CSSStyleSheet | undefined {
    if (supportsAdoptingStyleSheets && !this.#sheet) (this.#sheet = new CSSStyleSheet()).replaceSync(this.cssText);
    return this.#sheet;
  }
  toString(): string {
    return this.cssText;
  }
}

export const unsafeCSS = (value: unknown): CSSResult => new CSSResult(String(value));

/** Not used by the widget (its styles are one string): lit's `css` without its check of each value. */
export const css = (strings: TemplateStringsArray, ...values: unknown[]): CSSResult => unsafeCSS(String.raw(strings, ...values));

export const adoptStyles = (root: ShadowRoot, styles: CSSResultOrNative[]): void => {
  if (supportsAdoptingStyleSheets) root.adoptedStyleSheets = styles.map((s) => (s instanceof CSSStyleSheet ? s : s.styleSheet!));
  else {
    for (const s of styles) {
      const style = document.createElement('style');
      const nonce = (globalThis as { litNonce?: string }).litNonce;
      if (nonce !== undefined) style.setAttribute('nonce', nonce);
      style.textContent = (s as CSSResult).cssText;
      root.appendChild(style);
    }
  }
};

export const getCompatibleStyle = (s: CSSResultOrNative): CSSResultOrNative => s;
