/**
 * A payment found again after a reload (open-amount mode): the key of one checkout on one page, and
 * what sessionStorage keeps under it (checkout mode keeps nothing: the proxy answers the same payment).
 */
import type { PixEnvironment } from './environment.ts';

/** What survives a reload: the payment on screen and the renewals used. */
export interface Saved {
  reference: string;
  renewals: number;
}

type Storage = PixEnvironment['storage'];

/**
 * One checkout on one page: a change of key shows another payment; in open-amount mode, the key
 * under which a reload finds its payment again. Null: nothing to show yet (no endpoint, or neither a
 * checkout nor an amount).
 */
export function resumeKey({
  endpoint,
  checkout: id,
  amount,
  description,
}: {
  endpoint: string;
  checkout: string | null | undefined;
  amount: number | undefined;
  description: string | undefined;
}): string | null {
  if (!endpoint || (id == null && amount == null)) return null;
  return `pix-checkout:${new URL(endpoint, location.href).href}|${id != null ? `checkout:${id}` : `${amount}|${description ?? ''}`}`;
}

export function loadSaved(storage: Storage, key: string): Saved | null {
  try {
    const saved = JSON.parse(storage?.getItem(key) ?? 'null') as Saved | null;
    return saved && typeof saved.reference === 'string' && Number.isInteger(saved.renewals) ? saved : null;
  } catch {
    return null;
  }
}

export function saveForReload(storage: Storage, key: string, saved: Saved): void {
  try {
    storage?.setItem(key, JSON.stringify(saved));
  } catch {
    // Storage full or blocked: the payment still works, it just will not resume after a reload.
  }
}
