/**
 * Watches an element's shadow root on every frame until stopped: how many frames had no QR, and what
 * the status line said. Imports nothing of the widget: the files that take over markup before the
 * widget's script is defined use it.
 */
const part = (el: Element, name: string) => el.shadowRoot?.querySelector<HTMLElement>(`[part~="${name}"]`) ?? null;

export function watchFrames(el: Element) {
  let missing = 0;
  let frames = 0;
  const statuses = new Set<string>();
  let on = true;
  const tick = () => {
    if (!on) return;
    frames++;
    if (!part(el, 'qr')) missing++;
    statuses.add(part(el, 'status')?.textContent?.trim() ?? '');
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  return {
    stop: () => {
      on = false;
      return { missing, frames, statuses };
    },
  };
}
