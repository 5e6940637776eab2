import { expect, oneEvent } from '@open-wc/testing';
import { executeServerCommand, sendKeys } from '@web/test-runner-commands';
import { FakeClock } from './support/fake-clock.ts';
import { announced, forgetSavedPayments, mount, part, text } from './support/helpers.ts';

beforeEach(forgetSavedPayments);

const refusing = { writeText: () => Promise.reject(new DOMException('Write permission denied.', 'NotAllowedError')) };

describe('copy', () => {
  it('copies with the Clipboard API, says "copied" and announces it, then offers to copy again', async () => {
    expect(await executeServerCommand('grant-clipboard')).to.equal(true);
    const clock = new FakeClock();
    const { el, payment } = await mount({ env: { clock } });
    const copied = oneEvent(el, 'pix-copy');
    // A real key press on the focused button: the customer's own gesture.
    part(el, 'copy-button')!.focus();
    await sendKeys({ press: 'Enter' });
    expect((await copied).detail).to.deep.equal({ copied: true, method: 'clipboard' });
    expect(await navigator.clipboard.readText()).to.equal(payment.brcode);
    await el.updateComplete;
    expect(text(el, 'copy-button')).to.equal('Código copiado');
    expect(announced(el)).to.equal('Código copiado');
    expect(part(el, 'copy-hint')).to.equal(null);
    clock.advance(4000);
    await el.updateComplete;
    expect(text(el, 'copy-button')).to.equal('Copiar código');
  });

  it('when the Clipboard API refuses, falls back to select + execCommand', async () => {
    const { el, payment } = await mount({ env: { clipboard: refusing, execCopy: () => true, clock: new FakeClock() } });
    const copied = oneEvent(el, 'pix-copy');
    part(el, 'copy-button')!.click();
    expect((await copied).detail).to.deep.equal({ copied: true, method: 'execCommand' });
    const field = part(el, 'code') as HTMLTextAreaElement;
    expect(field.value.slice(field.selectionStart, field.selectionEnd)).to.equal(payment.brcode);
    await el.updateComplete;
    expect(announced(el)).to.equal('Código copiado');
  });

  it('when nothing copies, never says "copied": leaves the code selected with a hint, announced', async () => {
    const { el, payment } = await mount({ env: { clipboard: refusing, execCopy: () => false, clock: new FakeClock() } });
    const copied = oneEvent(el, 'pix-copy');
    part(el, 'copy-button')!.click();
    expect((await copied).detail).to.deep.equal({ copied: false, method: 'manual' });
    await el.updateComplete;
    const field = part(el, 'code') as HTMLTextAreaElement;
    expect(el.shadowRoot!.activeElement === field, 'the focus on the code field').to.equal(true);
    expect(field.value.slice(field.selectionStart, field.selectionEnd)).to.equal(payment.brcode);
    expect(text(el, 'copy-button')).to.equal('Copiar código');
    expect(text(el, 'copy-hint')).to.equal('Não foi possível copiar. O código está selecionado: copie manualmente.');
    expect(field.getAttribute('aria-describedby')).to.equal('copy-hint');
    expect(announced(el)).to.equal('Não foi possível copiar. O código está selecionado: copie manualmente.');
  });

  it('without any Clipboard API, still tries the fallback', async () => {
    const { el } = await mount({ env: { clipboard: null, execCopy: () => false, clock: new FakeClock() } });
    const copied = oneEvent(el, 'pix-copy');
    part(el, 'copy-button')!.click();
    expect((await copied).detail.method).to.equal('manual');
  });
});
