import { unsafeCSS } from 'lit';

/**
 * The styles are one string made here, no value of a page's in it: lit's `css` tag, which checks
 * each interpolated value, would add its code and message to the script (144 B gzipped). Raw, so a
 * CSS escape (`\2022`) stays as written.
 */
const css = String.raw;

/*
 * Public `--pix-*` properties map to private `--_*` ones, so defaults live in one place. Dark
 * defaults apply with prefers-color-scheme (unless theme="light") or theme="dark"; a page's own
 * `--pix-*` values win in both. Written readable: the build minifies it (minifyCssTemplates in
 * vite.config.ts).
 */
const palette = (v: string[]) =>
  ['accent', 'on-accent', 'color', 'background', 'muted-color', 'border-color', 'success-color', 'danger-color']
    .map((name, i) => `--_${name}:var(--pix-${name},${v[i]});`)
    .join('');
const light = palette(['#0b7a5c', '#fff', '#1a1f24', '#fff', '#545e68', '#aab4bd', '#0b7a5c', '#b3261e']);
const dark = `color-scheme:dark;${palette(['#5ee0b5', '#06281d', '#e8ecef', '#16191d', '#a9b3bc', '#46505a', '#5ee0b5', '#ff8a80'])}`;

export const styles = unsafeCSS(css`
  :host {
    color-scheme: light;
    ${light}--_r:var(--pix-radius,12px);
    display: block;
    max-width: 26rem;
    color: var(--_color);
    background: var(--_background);
    font-family: var(--pix-font-family, system-ui, sans-serif);
    line-height: 1.4;
    border-radius: var(--_r);
  }
  @media (prefers-color-scheme: dark) {
    :host(:not([theme='light'])) {
      ${dark}
    }
  }
  :host([theme='dark']) {
    ${dark}
  }
  [part='base'],
  .qr,
  .copy {
    display: flex;
    flex-direction: column;
    gap: 0.75rem;
  }
  [part='base'] {
    padding: 1rem;
  }
  .qr,
  .copy {
    gap: 0.5rem;
  }
  .qr {
    align-items: center;
  }
  p,
  figure,
  dl {
    margin: 0;
  }
  [part='amount'] {
    font-size: 1.5rem;
    font-weight: 700;
  }
  [part='status'] {
    font-weight: 600;
    font-size: 1.125rem;
  }
  .paid [part='status'] {
    color: var(--_success-color);
  }
  .expired [part='status'],
  .canceled [part='status'],
  .error [part='status'] {
    color: var(--_danger-color);
  }
  .loading {
    animation: pulse 1.2s ease-in-out infinite alternate;
  }
  @keyframes pulse {
    to {
      opacity: 0.55;
    }
  }
  [part='hint'],
  [part='scan-hint'],
  [part='countdown'] {
    color: var(--_muted-color);
    font-size: 0.875rem;
  }
  time {
    font-variant-numeric: tabular-nums;
    font-weight: 600;
    color: var(--_color);
  }
  [part='progress'] {
    appearance: none;
    width: 100%;
    height: 4px;
    border: 0;
    border-radius: 2px;
    background: var(--_border-color);
    color: var(--_accent);
  }
  [part='progress']::-webkit-progress-bar {
    background: var(--_border-color);
  }
  [part='progress']::-webkit-progress-value {
    background: var(--_accent);
  }
  [part='progress']::-moz-progress-bar {
    background: var(--_accent);
  }
  [part='qr'] {
    width: min(100%, var(--pix-qr-size, 15rem));
    aspect-ratio: 1;
    background: #fff;
    border-radius: 4px;
  }
  [part='code-label'] {
    font-weight: 600;
    font-size: 0.875rem;
  }
  [part='code'] {
    box-sizing: border-box;
    width: 100%;
    font:
      0.8rem/1.3 ui-monospace,
      monospace;
    word-break: break-all;
    resize: none;
    padding: 0.5rem;
    border: 1px solid var(--_border-color);
    border-radius: calc(var(--_r) / 2);
    color: inherit;
    background: none;
  }
  button,
  .button {
    font: inherit;
    font-weight: 600;
    min-height: 44px;
    box-sizing: border-box;
    padding: 0.625rem 1rem;
    border: 0;
    border-radius: calc(var(--_r) / 2);
    background: var(--_accent);
    color: var(--_on-accent);
    cursor: pointer;
    text-align: center;
    text-decoration: none;
  }
  .copied {
    background: var(--_success-color);
  }
  .secondary {
    background: none;
    color: var(--_accent);
    box-shadow: inset 0 0 0 2px;
  }
  :disabled {
    opacity: 0.6;
  }
  dt {
    color: var(--_muted-color);
  }
  dd {
    margin: 0 0 0.5rem;
    overflow-wrap: anywhere;
  }
  :focus-visible {
    outline: 3px solid var(--_accent);
    outline-offset: 2px;
  }
  a {
    color: var(--_accent);
    align-self: flex-start;
  }
  a.button {
    align-self: stretch;
  }
  .sr-only {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
  /* Printing (the paid screen's "print or save receipt"): the receipt in black on white, no controls. */
  @media print {
    :host,
    * {
      color: #000 !important;
      background: #fff !important;
    }
    button,
    progress {
      display: none !important;
    }
  }
  @media (prefers-reduced-motion: reduce) {
    * {
      animation: none !important;
      transition: none !important;
    }
  }
`);
