/**
 * The screens the first script draws without its later chunk: loading and error (a chunk that cannot
 * load must still say so); and the status line itself, which every screen has (focused when the
 * screen changes under the focus). The others are in src/views/outcome.ts.
 */
import { html, nothing } from 'lit';
import type { Translation } from '../locales/index.ts';

export function statusLine(text: string, hint?: string | typeof nothing) {
  return html`<p part="status" tabindex="-1">${text}</p>
    ${hint ? html`<p part="hint">${hint}</p>` : nothing}`;
}

/** No text until the page's language is at hand (`hasTranslation`): never a flash of another. */
export function renderLoading(t: Translation, hasTranslation: boolean) {
  return html`<p part="status" tabindex="-1" class="loading">${hasTranslation ? t.loading : nothing}</p>`;
}

export function renderError(t: Translation, retry: () => void) {
  return html`<p part="status" tabindex="-1" role="alert">${t.error}</p>
    <button part="retry-button" @click=${retry}>${t.retry}</button>`;
}
