/**
 * Minifies CSS text: comments go, white space collapses, quotes leave identifier attribute values,
 * and `0.5` becomes `.5`. Conservative: a space before `:` is kept, as in a descendant `a :hover`.
 * The script-tag build runs the widget's css`` templates through it (vite.config.ts), and the
 * server-rendered widget its styles, so both carry the same bytes of CSS.
 */
export const minifyCss = (text: string): string =>
  text
    .replace(/\/\*[^]*?\*\//g, '')
    .replace(/\s+/g, ' ')
    .replace(/\s*([{};,>])\s*/g, '$1')
    .replace(/:\s+/g, ':')
    .replace(/;}/g, '}')
    .replace(/=(['"])([\w-]+)\1\]/g, '=$2]')
    .replace(/([\s:(,])0\.(\d)/g, '$1.$2');
