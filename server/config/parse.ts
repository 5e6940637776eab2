/**
 * Reading the table (settings.ts): each variable through its kind's zod schema, every problem
 * collected; the values landed where the table says (`at`); DEFAULTS built the same way from the
 * defaults. The types are inferred from the table, never written again.
 */
import type { Kind } from './kinds.ts';
import { SETTINGS, type Setting, type SettingName } from './settings.ts';
import { TUNABLES } from './tunables.ts';

type Table = typeof SETTINGS;
type ValueOf<E> = E extends { kind: Kind<infer T> } ? T : never;

/** Each variable's value: its default when unset, undefined when it has none. */
export type Values = { [N in SettingName]: Table[N] extends { default: unknown } ? ValueOf<Table[N]> : ValueOf<Table[N]> | undefined };

type Nest<P extends string, V> = P extends `${infer H}.${infer T}` ? { [K in H]: Nest<T, V> } : { [K in P]: V };
type Intersect<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type Expand<T> = T extends object ? { [K in keyof T]: Expand<T[K]> } : T;
/** The entries matching `Filter` that land somewhere, nested at their paths (undefined possible where there is no default). */
type Landed<Filter> = Expand<
  Intersect<{ [N in SettingName]: Table[N] extends { at: infer P extends string } & Filter ? Nest<P, Values[N]> : never }[SettingName]>
>;

/** The proxy's settings the table lands (`at`), as proxyConfig() reads them. */
export type Settings = Landed<{ for: 'proxy' }>;
/** Those createApp takes as options, at the same places. */
export type AppLanded = Landed<{ app: true }>;
/** Every default: the table's, where they land, and the TUNABLES no variable sets. */
export type Defaults = Expand<typeof TUNABLES & Landed<unknown>>;

const entries = Object.entries(SETTINGS) as [SettingName, Setting][];

/** Sets each value at its dotted path in a new object. */
function land(pairs: [string, unknown][], into: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [path, value] of pairs) {
    const keys = path.split('.');
    let node = into;
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[keys.at(-1)!] = value;
  }
  return into;
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/**
 * Every default of the proxy, the command line and createApp, in one place: createApp fills what its
 * caller leaves out from here, and proxyConfig() reads the environment with these as fallbacks.
 */
export const DEFAULTS = land(
  entries.filter(([, s]) => s.at !== undefined && s.default !== undefined).map(([, s]) => [s.at!, s.default]),
  clone(TUNABLES),
) as Defaults;

export interface Reading {
  values: Values;
  /** Every problem, worded `NAME must ...`, never repeating a value (a list's bad item aside). */
  problems: string[];
  /** The variables set to a value their kind refused (their default stands in). */
  invalid: Set<SettingName>;
  /** The variables set (not unset), valid or not. */
  given: Set<SettingName>;
}

/** Reads the variables of `group` (or those named) from `env`: each through its kind, its default when unset. */
export function readSettings(env: Record<string, string | undefined>, group: Setting['for'] | readonly SettingName[]): Reading {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  const invalid = new Set<SettingName>();
  const given = new Set<SettingName>();
  for (const [name, setting] of entries) {
    if (typeof group === 'string' ? setting.for !== group : !group.includes(name)) continue;
    const raw = env[name];
    values[name] = setting.default;
    if (raw === undefined || setting.kind.unset(raw)) continue;
    given.add(name);
    const parsed = setting.kind.schema.safeParse(raw, { reportInput: false });
    if (parsed.success) {
      values[name] = parsed.data;
      continue;
    }
    invalid.add(name);
    for (const { message } of parsed.error.issues)
      problems.push(`${name}${message.startsWith(':') ? '' : ' '}${message === 'Invalid input' ? 'is invalid' : message}`);
  }
  return { values: values as Values, problems, invalid, given };
}

/** The values of `group` landed at their paths (`at`). */
export function landValues(values: Partial<Values>, group: Setting['for']): Record<string, unknown> {
  return land(entries.filter(([, s]) => s.for === group && s.at !== undefined).map(([name, s]) => [s.at!, values[name]]));
}

/** The names of a group's variables (the sandbox's, handed to its process). */
export const settingNames = (group: Setting['for']): SettingName[] => entries.filter(([, s]) => s.for === group).map(([name]) => name);
