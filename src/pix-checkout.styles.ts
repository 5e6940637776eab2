import { css } from 'lit';

/** Public `--pix-*` properties map to private `--_*` ones, so defaults live in one place. */
export const styles = css`
  :host {
    --_accent: var(--pix-accent, #0b7a5c);
    --_fg: var(--pix-color, #1a1f24);
    --_bg: var(--pix-background, #ffffff);
    --_muted: var(--pix-muted-color, #5b6570);
    --_radius: var(--pix-radius, 12px);
    --_font: var(--pix-font-family, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif);
    display: block;
    max-width: 26rem;
    color: var(--_fg);
    background: var(--_bg);
    font-family: var(--_font);
    border-radius: var(--_radius);
  }
  [part='base'] {
    display: flex;
    flex-direction: column;
    gap: 0.75rem;
    padding: 1rem;
  }
  .amount {
    font-size: 1.5rem;
    font-weight: 700;
    margin: 0;
  }
  [part='qr'] {
    width: min(100%, 16rem);
    aspect-ratio: 1;
    align-self: center;
    background: #fff;
  }
  [part='code'] {
    width: 100%;
    box-sizing: border-box;
    font: 0.8rem/1.3 ui-monospace, 'SFMono-Regular', Menlo, monospace;
    word-break: break-all;
    resize: none;
    padding: 0.5rem;
    border: 1px solid var(--_muted);
    border-radius: calc(var(--_radius) / 2);
    color: inherit;
    background: transparent;
  }
  button {
    font: inherit;
    font-weight: 600;
    min-height: 44px;
    padding: 0.5rem 1rem;
    border: 0;
    border-radius: calc(var(--_radius) / 2);
    background: var(--_accent);
    color: #fff;
    cursor: pointer;
  }
  button:focus-visible,
  a:focus-visible,
  textarea:focus-visible {
    outline: 3px solid var(--_accent);
    outline-offset: 2px;
  }
  [part='status'] {
    margin: 0;
    font-weight: 600;
  }
  .hint {
    color: var(--_muted);
    font-size: 0.875rem;
    margin: 0;
  }
  a {
    color: var(--_accent);
  }
  .sr-only {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
`;
