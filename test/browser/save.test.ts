/**
 * "Salvar QR Code" on the phone layout: the QR saved as a PNG, through the share sheet with a file
 * where the browser takes files, else as a download. Against the real stack; the image is read back
 * with jsQR (not our encoder), as a bank app would read it from the gallery. Fakes only for time and
 * the share sheet; the download path runs the widget's own anchor code, caught at the click.
 */
import { expect, oneEvent, waitUntil } from '@open-wc/testing';
import type { PixEnvironment } from '../../src/controllers/environment.ts';
import type { PixSaveEvent } from '../../src/events.ts';
import type { PixCheckout } from '../../src/pix-checkout.ts';
import { FakeClock } from './support/fake-clock.ts';
import { forgetSavedPayments, mount, part } from './support/helpers.ts';
import { readQrImage } from './support/qr-reader.ts';

beforeEach(forgetSavedPayments);

// src/save.ts's MODULE_PX and REVOKE_AFTER_MS. Not imported: this page must load that module only
// as the widget does (the first test checks when).
const MODULE_PX = 10;
const REVOKE_AFTER_MS = 60_000;

/** Dark pixels in rows [from, to) of the image. */
function darkIn(image: { width: number; pixels: Uint8ClampedArray }, from: number, to: number): number {
  let dark = 0;
  for (let i = from * image.width * 4; i < to * image.width * 4; i += 4) if (image.pixels[i]! < 128) dark++;
  return dark;
}

/** A share sheet as a browser with the Web Share API exposes it: `files` says whether canShare takes files. */
function shareSheet(files: boolean, answer: () => Promise<void> = () => Promise.resolve()) {
  const shared: ShareData[] = [];
  const share: NonNullable<PixEnvironment['share']> = {
    share: (data) => {
      shared.push(data);
      return answer();
    },
    canShare: (data) => files || !data.files?.length,
  };
  return { share, shared };
}

/** Downloads caught at the click (capture phase, before the browser acts): the anchor's name and blob URL. */
function catchDownloads() {
  const downloads: { name: string; href: string; anchor: HTMLAnchorElement }[] = [];
  const onClick = (event: MouseEvent) => {
    const anchor = event.composedPath()[0];
    if (!(anchor instanceof HTMLAnchorElement) || !anchor.hasAttribute('download')) return;
    event.preventDefault();
    downloads.push({ name: anchor.download, href: anchor.href, anchor });
  };
  window.addEventListener('click', onClick, true);
  return { downloads, stop: () => window.removeEventListener('click', onClick, true) };
}

/** What the widget reported after a tap: its pix-save and pix-error events. */
function listen(el: PixCheckout) {
  const saved: PixSaveEvent['detail'][] = [];
  const errors: { code: string; fatal: boolean }[] = [];
  el.addEventListener('pix-save', (e) => saved.push(e.detail));
  el.addEventListener('pix-error', (e) => errors.push({ code: e.detail.code, fatal: e.detail.fatal }));
  return { saved, errors };
}

/** Lets the promise callbacks and tasks queued by a tap run. */
const tasks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 0));
};

const phone = { layout: 'phone' };
const saveButton = (el: PixCheckout) => part(el, 'save-button') as HTMLButtonElement | null;

describe('"Salvar QR Code"', () => {
  let downloads: ReturnType<typeof catchDownloads>;
  beforeEach(() => (downloads = catchDownloads()));
  afterEach(() => downloads.stop());

  it('loads its chunk when the button first shows, before any tap', async () => {
    const requested = () => performance.getEntriesByType('resource').filter((entry) => entry.name.includes('/src/save.ts')).length;
    const desktop = await mount({ attrs: { layout: 'desktop' }, env: { clock: new FakeClock(), share: null } });
    expect(requested(), 'not on the desktop layout').to.equal(0);
    desktop.el.layout = 'phone';
    await desktop.el.updateComplete;
    expect(saveButton(desktop.el)).to.exist;
    await waitUntil(() => requested() === 1, 'src/save.ts requested');
  });

  it('shares a PNG file where the share sheet takes files: the QR reads back as the payment code, with the texts under it', async () => {
    const { share, shared } = shareSheet(true);
    const { el, payment } = await mount({ amount: 10.5, attrs: phone, env: { clock: new FakeClock(), share } });
    const button = saveButton(el)!;
    expect(button.tagName).to.equal('BUTTON');
    expect(button.textContent.trim()).to.equal('Salvar QR Code');

    const saved = oneEvent(el, 'pix-save');
    button.click();
    expect((await saved).detail).to.deep.equal({ method: 'share' });
    expect(shared).to.have.length(1);
    expect(Object.keys(shared[0]!)).to.deep.equal(['files']);
    const [file] = shared[0]!.files!;
    expect(file).to.be.instanceOf(File);
    expect(file!.type).to.equal('image/png');
    expect(file!.name).to.equal(`pix-${payment.reference}.png`);

    const image = await readQrImage(file!);
    expect(image.code).to.equal(payment.brcode);
    // The QR at MODULE_PX per module, quiet zone included (the symbol on screen has the same modules).
    const modules = Number(part(el, 'qr')!.getAttribute('viewBox')!.split(' ')[2]);
    const side = modules * MODULE_PX;
    expect(image.width).to.be.at.least(side);
    expect(image.height).to.be.above(side);
    // White around the symbol (its quiet zone), and the two lines of text drawn under it.
    expect(darkIn(image, 0, 4 * MODULE_PX)).to.equal(0);
    expect(darkIn(image, side, image.height)).to.be.above(100);
    expect(darkIn(image, image.height - MODULE_PX, image.height)).to.equal(0);
    expect(downloads.downloads).to.deep.equal([]);

    // The chunk at hand: the second tap reaches share() inside the click itself (the tap's activation).
    button.click();
    expect(shared).to.have.length(2);
  });

  for (const [name, share] of [
    ['without the Web Share API', () => null],
    ['where canShare refuses files', () => shareSheet(false).share],
  ] as const) {
    it(`${name}: downloads pix-<reference>.png through a blob URL, revoked later`, async () => {
      const clock = new FakeClock();
      const { el, payment } = await mount({ amount: 20, attrs: phone, env: { clock, share: share() } });
      const { saved, errors } = listen(el);
      const done = oneEvent(el, 'pix-save');
      saveButton(el)!.click();
      expect((await done).detail).to.deep.equal({ method: 'download' });
      expect(errors).to.deep.equal([]);
      expect(saved).to.have.length(1);
      expect(downloads.downloads).to.have.length(1);
      const [{ name: file, href, anchor }] = downloads.downloads as [(typeof downloads.downloads)[0]];
      expect(file).to.equal(`pix-${payment.reference}.png`);
      expect(href.startsWith('blob:')).to.equal(true);
      expect(anchor.isConnected, 'the anchor left the page').to.equal(false);

      const blob = await (await fetch(href)).blob();
      expect(blob.type).to.equal('image/png');
      expect((await readQrImage(blob)).code).to.equal(payment.brcode);

      clock.advance(REVOKE_AFTER_MS);
      let revoked = false;
      await fetch(href).catch(() => (revoked = true));
      expect(revoked, 'the blob URL is revoked').to.equal(true);
    });
  }

  it('the customer closing the share sheet (AbortError) is silent: no event, no error, no download', async () => {
    const { share, shared } = shareSheet(true, () => Promise.reject(new DOMException('Share canceled', 'AbortError')));
    const { el } = await mount({ attrs: phone, env: { clock: new FakeClock(), share } });
    const { saved, errors } = listen(el);
    saveButton(el)!.click();
    await waitUntil(() => shared.length === 1, 'share() called');
    await tasks();
    expect(saved).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
    expect(downloads.downloads).to.deep.equal([]);
  });

  it("a share refused for want of the tap's activation (NotAllowedError) downloads instead", async () => {
    const { share, shared } = shareSheet(true, () => Promise.reject(new DOMException('Must be handling a user gesture', 'NotAllowedError')));
    const { el, payment } = await mount({ attrs: phone, env: { clock: new FakeClock(), share } });
    const { errors } = listen(el);
    const done = oneEvent(el, 'pix-save');
    saveButton(el)!.click();
    expect((await done).detail).to.deep.equal({ method: 'download' });
    expect(shared).to.have.length(1);
    expect(errors).to.deep.equal([]);
    expect(downloads.downloads.map((d) => d.name)).to.deep.equal([`pix-${payment.reference}.png`]);
  });

  it('any other failure of the share sheet is a non-fatal share_failed, with no download', async () => {
    const { share } = shareSheet(true, () => Promise.reject(new DOMException('The share failed', 'DataError')));
    const { el } = await mount({ attrs: phone, env: { clock: new FakeClock(), share } });
    const { saved } = listen(el);
    const failed = oneEvent(el, 'pix-error');
    saveButton(el)!.click();
    const { detail } = await failed;
    expect([detail.code, detail.fatal]).to.deep.equal(['share_failed', false]);
    await tasks();
    expect(saved).to.deep.equal([]);
    expect(downloads.downloads).to.deep.equal([]);
  });

  it('a download that fails is a non-fatal share_failed too', async () => {
    const { el } = await mount({
      attrs: phone,
      env: {
        clock: new FakeClock(),
        share: null,
        download: () => {
          throw new Error('no downloads here');
        },
      },
    });
    const failed = oneEvent(el, 'pix-error');
    saveButton(el)!.click();
    const { detail } = await failed;
    expect([detail.code, detail.fatal]).to.deep.equal(['share_failed', false]);
  });

  it('is offered on the phone layout only: not on the desktop layout (QR first)', async () => {
    const { el } = await mount({ attrs: { layout: 'desktop' }, env: { clock: new FakeClock(), share: shareSheet(true).share } });
    expect(saveButton(el)).to.equal(null);
    el.layout = 'phone';
    await el.updateComplete;
    expect(saveButton(el)).to.exist;
    // Phone layout: the code to copy first, the button with the other actions, before the QR.
    expect(part(el, 'save-button')!.compareDocumentPosition(part(el, 'qr')!) & Node.DOCUMENT_POSITION_FOLLOWING).to.not.equal(0);
    el.layout = 'desktop';
    await el.updateComplete;
    expect(saveButton(el)).to.equal(null);
  });

  for (const theme of ['light', 'dark']) {
    it(`passes axe with the button shown (${theme})`, async () => {
      const { el } = await mount({ attrs: { ...phone, theme }, env: { clock: new FakeClock(), share: shareSheet(true).share } });
      expect(saveButton(el)).to.exist;
      await expect(el).to.be.accessible();
    });
  }

  for (const [locale, label] of [
    ['pt-BR', 'Salvar QR Code'],
    ['en', 'Save QR code'],
    ['es', 'Guardar código QR'],
  ] as const) {
    it(`says "${label}" in ${locale}`, async () => {
      const { el } = await mount({ attrs: { ...phone, locale }, env: { clock: new FakeClock(), share: null } });
      expect(saveButton(el)!.textContent.trim()).to.equal(label);
    });
  }
});
