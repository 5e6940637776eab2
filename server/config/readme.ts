/** The configuration table of docs/configuration.md (once the README's), rendered from the table (settings.ts): `npm run docs:config` writes it; its links are relative to docs/. */
import { SETTINGS, type Setting } from './settings.ts';

/** Where the rendered table sits in docs/configuration.md. */
export const README_MARKERS = ['<!-- settings:start (npm run docs:config) -->', '<!-- settings:end -->'] as const;

const cell = (text: string) => text.replaceAll('|', '\\|');

/** One row per variable: its name, type and range, default and meaning. */
export function renderSettingsTable(): string {
  const rows = (Object.entries(SETTINGS) as [string, Setting][]).map(([name, setting]) => {
    const shown = setting.shown ?? (setting.default === undefined ? 'none' : `\`${setting.kind.show(setting.default)}\``);
    return `| \`${name}\` | ${cell(setting.kind.type)} | ${cell(shown)} | ${cell(setting.doc)} |`;
  });
  return ['| Variable | Type | Default | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** `readme` with the text between the markers replaced by the rendered table. */
export function withSettingsTable(readme: string): string {
  const [start, end] = README_MARKERS;
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/configuration.md lacks the markers ${start} ... ${end}`);
  return `${readme.slice(0, from + start.length)}\n${renderSettingsTable()}\n${readme.slice(to)}`;
}
