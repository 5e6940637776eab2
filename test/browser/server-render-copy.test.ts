/**
 * The copy button of a server-rendered <pix-checkout> (renderPixCheckout), before the widget's script:
 * the small inline handler the render puts after the element works from the first paint, with the
 * same honest "copied" (only when a copy happened) and fallback as the widget's own.
 *
 * This file never imports the widget: the element stays undefined, as on a page whose script has not
 * arrived yet.
 */
import { expect } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';

interface Rendered {
  status: number;
  html: string;
}

/** The markup parsed as the page's parser does (declarative shadow DOM), its inline scripts run where they stand. */
async function render(): Promise<HTMLElement> {
  const order_id = `ssr-copy-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const res = await executeServerCommand<Rendered, unknown>('render-checkout', { value: 12.34, order_id });
  if (res.status !== 201) throw new Error(`create checkout answered ${res.status}`);
  const host = document.createElement('div');
  document.body.append(host);
  (host as unknown as { setHTMLUnsafe: (html: string) => void }).setHTMLUnsafe(res.html);
  // Parsed scripts do not run: each is replaced by a copy, which runs as the parser would run it.
  for (const parsed of host.querySelectorAll('script')) {
    const script = document.createElement('script');
    script.textContent = parsed.textContent;
    parsed.replaceWith(script);
  }
  return host.querySelector('pix-checkout')!;
}

const part = (el: Element, name: string) => el.shadowRoot!.querySelector<HTMLElement>(`[part~="${name}"]`)!;

describe('a server-rendered copy button, before the widget script', () => {
  // Own properties laid over the prototypes' methods, removed after each test.
  afterEach(() => {
    delete (navigator.clipboard as unknown as Record<string, unknown>).writeText;
    delete (document as unknown as Record<string, unknown>).execCommand;
    performance.clearMarks('pix-checkout:copy-ready');
  });

  it('copies with the Clipboard API in the tap, says so, and fires pix-copy', async () => {
    const written: string[] = [];
    Object.defineProperty(navigator.clipboard, 'writeText', {
      value: (text: string) => (written.push(text), Promise.resolve()),
      configurable: true,
      writable: true,
    });
    const el = await render();
    expect(customElements.get('pix-checkout')).to.equal(undefined);
    expect(performance.getEntriesByName('pix-checkout:copy-ready', 'mark').length).to.equal(1);
    const copies: CustomEvent[] = [];
    el.addEventListener('pix-copy', (event) => copies.push(event as CustomEvent));
    part(el, 'copy-button').click();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(written).to.deep.equal([(part(el, 'code') as HTMLTextAreaElement).value]);
    expect(written[0]).to.match(/^000201/);
    expect(part(el, 'copy-button').textContent).to.equal('Código copiado');
    expect(el.shadowRoot!.querySelector('[role=status]')!.textContent).to.equal('Código copiado');
    expect(copies.map((event) => event.detail)).to.deep.equal([{ copied: true, method: 'clipboard' }]);
    el.parentElement!.remove();
  });

  it('falls back to execCommand, then leaves the code selected with the hint, never saying "copied" when it was not', async () => {
    Object.defineProperty(navigator.clipboard, 'writeText', { value: () => Promise.reject(new Error('denied')), configurable: true, writable: true });
    Object.defineProperty(document, 'execCommand', { value: () => false, configurable: true, writable: true });
    const el = await render();
    const copies: CustomEvent[] = [];
    el.addEventListener('pix-copy', (event) => copies.push(event as CustomEvent));
    part(el, 'copy-button').click();
    await new Promise((resolve) => setTimeout(resolve, 0));
    const field = part(el, 'code') as HTMLTextAreaElement;
    expect(copies.map((event) => event.detail)).to.deep.equal([{ copied: false, method: 'manual' }]);
    expect(part(el, 'copy-button').textContent).to.equal('Copiar código');
    expect(part(el, 'copy-hint').textContent).to.contain('copie manualmente');
    expect(field.getAttribute('aria-describedby')).to.equal('copy-hint');
    expect(field.selectionEnd - field.selectionStart).to.equal(field.value.length);
    el.parentElement!.remove();
  });
});
