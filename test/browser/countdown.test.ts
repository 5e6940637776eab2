import { expect, oneEvent } from '@open-wc/testing';
import { formatTimeLeft } from '../../src/controllers/countdown.ts';
import { announcementSlot } from '../../src/controllers/time-announcements.ts';
import { FakeClock } from './support/fake-clock.ts';
import { advanceSandbox, forgetSavedPayments, mount, pay, part, text } from './support/helpers.ts';

beforeEach(forgetSavedPayments);

const timeAnnouncement = (el: HTMLElement) => el.shadowRoot!.querySelector('[aria-live="polite"]:not([role])')!.textContent.trim();

describe('countdown', () => {
  it('counts down to the server expiry with hours, from the wall clock', async () => {
    const clock = new FakeClock();
    const { el } = await mount({ env: { clock } });
    expect(text(el, 'countdown')).to.equal('Expira em 1:00:00');
    clock.advance(1000);
    await el.updateComplete;
    expect(text(el, 'countdown')).to.equal('Expira em 59:59');
    clock.advance(3593_000);
    await el.updateComplete;
    expect(text(el, 'countdown')).to.equal('Expira em 00:06');
    const progress = part(el, 'progress') as HTMLProgressElement;
    expect(progress.value).to.equal(2); // 6 s of 3600 s, in thousandths
  });

  it('is corrected for a device clock that is hours wrong, using the server time', async () => {
    // The device thinks it is three hours earlier than the server does.
    const clock = new FakeClock(Date.now() - 3 * 3600_000);
    const { el } = await mount({ env: { clock } });
    expect(text(el, 'countdown')).to.equal('Expira em 1:00:00');
  });

  it('survives a reload: the same payment shows the time left, not a fresh hour', async () => {
    const first = new FakeClock();
    const { el, payment } = await mount({ amount: 3.21, env: { clock: first } });
    el.remove();
    // Twenty minutes later, on the server too, the page is loaded again.
    await advanceSandbox(20 * 60);
    const later = new FakeClock(first.now() + 20 * 60_000);
    const reloaded = await mount({ amount: 3.21, env: { clock: later } });
    expect(reloaded.payment.reference).to.equal(payment.reference);
    expect(text(reloaded.el, 'countdown')).to.equal('Expira em 40:00');
    await pay(payment.reference);
  });

  it('announces the time left every 3 min, every minute in the last 5, every 30 s in the last one', async () => {
    const clock = new FakeClock();
    const { el } = await mount({ env: { clock } });
    const heard: string[] = [];
    for (let s = 3600; s > 0; s--) {
      clock.advance(1000);
      await el.updateComplete;
      const said = timeAnnouncement(el);
      if (said && said !== heard.at(-1)) heard.push(said);
    }
    expect(heard.slice(0, 2)).to.deep.equal(['Faltam 57 minutos para pagar.', 'Faltam 54 minutos para pagar.']);
    expect(heard.slice(-7)).to.deep.equal([
      'Faltam 6 minutos para pagar.',
      'Faltam 5 minutos para pagar.',
      'Faltam 4 minutos para pagar.',
      'Faltam 3 minutos para pagar.',
      // Open-amount mode may issue a new code: the offer comes with the 2-minute mark, once.
      'Faltam 2 minutos para pagar. Precisa de mais tempo? Peça um novo código.',
      'Faltam 1 minuto para pagar.',
      'Faltam 30 segundos para pagar.',
    ]);
    // 19 three-minute marks (57 .. 3 min... until 5 min) + every minute below 5 + 30 s: not every second.
    expect(heard.length).to.be.lessThan(30);
  });

  it('checks the status at once when the time is up (the server says expired)', async () => {
    const clock = new FakeClock();
    const { el } = await mount({ env: { clock, EventSource: null } });
    await advanceSandbox(3600);
    const expired = oneEvent(el, 'pix-expired');
    clock.advance(3600_000);
    expect((await expired).detail.payment.status).to.equal('expired');
  });

  it('formats and slots time as specified', () => {
    expect(formatTimeLeft(3600)).to.equal('1:00:00');
    expect(formatTimeLeft(3599)).to.equal('59:59');
    expect(formatTimeLeft(7322)).to.equal('2:02:02');
    expect(formatTimeLeft(5)).to.equal('00:05');
    expect(announcementSlot(3420)).to.not.equal(announcementSlot(3421));
    expect(announcementSlot(3419)).to.equal(announcementSlot(3420 - 179));
    expect(announcementSlot(300)).to.not.equal(announcementSlot(301));
    expect(announcementSlot(30)).to.not.equal(announcementSlot(31));
  });
});
