/**
 * The open status streams of one instance, counted per client address and per payment, so that a
 * stranger cannot hold the instance's connections (and a payment's fan-out) with streams: past a
 * cap the stream is refused (429 `too_many_streams`) and the widget polls instead. A real page needs
 * one stream per open tab; the caps leave room for a household or an office behind one address.
 */
export interface StreamCaps {
  /** Streams one client address may hold open at once; 0: no cap. */
  perClient: number;
  /** Streams of one payment open at once; 0: no cap. */
  perPayment: number;
}

export class StreamSlots {
  private readonly clients = new Map<string, number>();
  private readonly payments = new Map<string, number>();

  constructor(private readonly caps: StreamCaps) {}

  /**
   * A place for one more stream of `reference` from `client`: its release (to call once, when the
   * stream ends however it ends), or null past a cap, with which cap.
   */
  take(client: string, reference: string): { release: () => void } | { refused: 'client' | 'payment' } {
    const { perClient, perPayment } = this.caps;
    if (perClient > 0 && (this.clients.get(client) ?? 0) >= perClient) return { refused: 'client' };
    if (perPayment > 0 && (this.payments.get(reference) ?? 0) >= perPayment) return { refused: 'payment' };
    add(this.clients, client, 1);
    add(this.payments, reference, 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        add(this.clients, client, -1);
        add(this.payments, reference, -1);
      },
    };
  }

  /** Streams open now (for tests and diagnostics). */
  open(client?: string, reference?: string): number {
    if (client !== undefined) return this.clients.get(client) ?? 0;
    if (reference !== undefined) return this.payments.get(reference) ?? 0;
    let total = 0;
    for (const n of this.payments.values()) total += n;
    return total;
  }
}

function add(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
