/**
 * The kinds of value a setting holds: each is a zod schema from the variable's text to its value
 * (with the problem's wording), when the text counts as unset, and how docs/configuration.md names its type
 * and shows a value. Messages never repeat the value, except the items of a list (origins, addresses).
 */
import { z } from 'zod/mini';
import { LIMITS, formatReais, isCents } from '../../src/shared/limits.ts';

export interface Kind<T> {
  /** From the variable's text (never undefined here: unset is decided first) to its value. */
  schema: z.ZodMiniType<T>;
  /** docs/configuration.md's Type cell: the type and its range. */
  type: string;
  /** Whether this text counts as not set, so the default applies. */
  unset: (raw: string) => boolean;
  /** A value as the variable would spell it (docs/configuration.md's Default cell; `show(default)` parses back to it). */
  show: (value: T) => string;
}

const empty = (raw: string) => raw === '';
const blank = (raw: string) => raw.trim() === '';
const never = () => false;

/** A whole number from `min` to `max` of `unit`; `scale` converts it to the unit it lands in (1000: seconds to ms). */
export function wholeNumber(min: number, max: number, unit = 'whole number', scale = 1): Kind<number> {
  return {
    schema: z.pipe(
      z.string().check(z.refine((raw) => /^\d+$/.test(raw.trim()) && Number(raw) >= min && Number(raw) <= max, `must be a whole number from ${min} to ${max}`)),
      z.transform((raw) => Number(raw) * scale),
    ),
    type: `${unit}, ${min} to ${max}`,
    unset: empty,
    show: (value) => String(value / scale),
  };
}

export const milliseconds = (min: number, max: number) => wholeNumber(min, max, 'milliseconds');
/** Whole seconds in the variable; `inMs` lands them in milliseconds. */
export const seconds = (min: number, max: number, inMs = false) => wholeNumber(min, max, 'seconds', inMs ? 1000 : 1);

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

export function flag(): Kind<boolean> {
  return {
    schema: z.pipe(
      z.string().check(z.refine((raw) => [...TRUE, ...FALSE].includes(raw.trim().toLowerCase()), 'must be true or false')),
      z.transform((raw) => TRUE.includes(raw.trim().toLowerCase())),
    ),
    type: 'true or false',
    unset: blank,
    show: String,
  };
}

/** An amount in reais within the partner's limits for a payment. */
export function reais(): Kind<number> {
  const { min, max } = LIMITS.paymentValue;
  return {
    schema: z.pipe(
      z
        .string()
        .check(
          z.refine(
            (raw) => /^\d+(\.\d{1,2})?$/.test(raw.trim()) && isCents(Number(raw)) && Number(raw) >= min && Number(raw) <= max,
            `must be an amount in reais from ${formatReais(min)} to ${formatReais(max)} (the partner's limits)`,
          ),
        ),
      z.transform(Number),
    ),
    type: `reais, ${formatReais(min)} to ${formatReais(max)}`,
    unset: empty,
    show: (value) => value.toFixed(2),
  };
}

/** Free text, trimmed unless `trim` is false; blank is unset. `check` adds a rule with its wording. */
export function text(options: { type?: string; trim?: boolean; check?: [(value: string) => boolean, string] } = {}): Kind<string> {
  const trim = options.trim ?? true;
  const base = z.string();
  return {
    schema: z.pipe(
      options.check ? base.check(z.refine((raw) => options.check![0](trim ? raw.trim() : raw), options.check[1])) : base,
      z.transform((raw) => (trim ? raw.trim() : raw)),
    ),
    type: options.type ?? 'text',
    unset: trim ? blank : empty,
    show: String,
  };
}

/** One of `values`, in any case; even empty, a value given is checked. */
export function oneOf<const V extends string>(values: readonly V[]): Kind<V> {
  return {
    schema: z.pipe(
      z.string().check(z.refine((raw) => (values as readonly string[]).includes(raw.trim().toLowerCase()), `must be one of ${values.join(', ')}`)),
      z.transform((raw) => raw.trim().toLowerCase() as V),
    ),
    type: values.map((v) => `\`${v}\``).join(', '),
    unset: never,
    show: String,
  };
}

/** Comma-separated items; empty is an empty list (not the default). `item` names each bad item. */
export function list(options: { type: string; item?: [(value: string) => boolean, (value: string) => string] }): Kind<string[]> {
  const split = (raw: string) =>
    raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const check = options.item;
  return {
    schema: z.pipe(
      check
        ? z.string().check(
            z.superRefine((raw, ctx) => {
              for (const item of split(raw)) if (!check[0](item)) ctx.issues.push({ code: 'custom', message: check[1](item), input: raw });
            }),
          )
        : z.string(),
      z.transform(split),
    ),
    type: options.type,
    unset: never,
    show: (value) => value.join(','),
  };
}

/** A zod schema of the partner's settings as it stands (only an absent variable is unset). */
export function checked<T>(schema: z.ZodMiniType<T>, type: string, show: (value: T) => string = String): Kind<T> {
  return { schema, type, unset: never, show };
}
