/**
 * Resolves once the frame being prepared is painted (its animation frame, then a task): what runs
 * after it (the later chunk's download and evaluation, the element's definition after a page's first
 * screen) never delays that frame. A hidden page paints no frame: at once.
 */
export const afterPaint = (): Promise<void> => new Promise((resolve) => (document.hidden ? resolve() : requestAnimationFrame(() => setTimeout(resolve))));
