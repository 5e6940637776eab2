/**
 * The first-QR phases (request sent, payment answered, QR encoded) as Performance marks, once per
 * page: bench/widget-timing.ts reads them to show where connected -> QR painted goes. Only the first
 * of each counts, so a renewal or a second widget does not move the figure.
 */
export function markOnce(name: string): void {
  if (performance.getEntriesByName(name, 'mark').length === 0) performance.mark(name);
}
