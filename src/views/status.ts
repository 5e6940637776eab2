/**
 * The screens that are a status line (and maybe a button): loading, error, expired, canceled; and
 * the status line itself, which every screen has (focused when the screen changes under the focus).
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

export function renderCanceled(t: Translation) {
  return statusLine(t.canceled, t.canceledHint);
}

/** With `renew` a "generate a new code" button; without, why none is offered (`exhausted`: the proxy refused). */
export function renderExpired(t: Translation, renew: (() => void) | null, exhausted: boolean) {
  return renew
    ? html`${statusLine(t.expired, t.expiredHint)} <button part="renew-button" @click=${renew}>${t.renew}</button>`
    : statusLine(t.expired, exhausted ? t.renewalsExhausted : t.renewLimit);
}
