/**
 * What the time-left live region says, in the chunk loaded once the first QR is on screen
 * (src/later.ts): the first announcement is minutes away, and the offer of more time comes with its
 * button, drawn by the same chunk.
 */
import { kit } from '../kit.ts';
import type { Translation } from '../locales/translation.ts';

/**
 * When screen readers hear the time left (Adyen's cadence): every 3 minutes, every minute in the last
 * 5, every 30 s in the last minute. Returns a key that changes exactly at those moments.
 */
export function announcementSlot(seconds: number): string {
  if (seconds > 300) return `a${Math.ceil(seconds / 180)}`;
  if (seconds > 60) return `b${Math.ceil(seconds / 60)}`;
  return `c${Math.ceil(seconds / 30)}`;
}

/**
 * What the time-left live region says: the time left when its announcement slot changes, and, once
 * per code, the time left with the "I need more time" offer when that offer appears (or is due on
 * arrival). Null: nothing new to say.
 */
export class TimeAnnouncements {
  #lastSlot: string | null = null;
  /** The reference whose offer was announced. */
  #offered: string | null = null;

  /** `seconds`: null when no pending code is on screen. */
  say(t: Translation, seconds: number | null, reference: string | null, offersMoreTime: boolean): string | null {
    let said: string | null = null;
    if (seconds === null) this.#lastSlot = null;
    else {
      const slot = announcementSlot(seconds);
      if (this.#lastSlot !== null && slot !== this.#lastSlot && seconds > 0) said = t.timeLeft(...kit.splitSeconds(seconds));
      this.#lastSlot = slot;
    }
    if (offersMoreTime && this.#offered !== reference) {
      this.#offered = reference;
      said = `${t.timeLeft(...kit.splitSeconds(seconds!))} ${t.moreTimeOffer}`;
    }
    return said;
  }
}
