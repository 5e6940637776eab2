/**
 * Finding a notification's fields anywhere in its body: every object, breadth first, under whatever
 * wrappers the partner puts around them (`{event, payload: {transaction: {...}}}`, `[{...}]`), to a
 * bounded depth and node count (`WALK`), each with the object it was found in.
 */
import { LIMITS } from '../../src/shared/limits.ts';
import { isObject } from './read-fields.ts';

export type Json = unknown;

/**
 * How far into a body the fields are looked for: nesting depth, and objects and arrays visited; and
 * the most payments one notification may list (`{"pix": [{...}, {...}]}`): each becomes a stored
 * notification of its own, so a larger list is kept for the operator, not split.
 */
export const WALK = { maxDepth: 6, maxNodes: 2_000, maxBatchItems: 100 } as const;

/** An object found in a body, with the one it was found in (an array between them is skipped). */
export interface Place {
  node: Record<string, Json>;
  parent: Place | null;
  /** Where it is in the body: keys and array indexes from the root. */
  path: (string | number)[];
}

/** Every object of a body, breadth first (the shallowest first), within `WALK`'s bounds. */
export function objectsOf(root: Json): Place[] {
  const places: Place[] = [];
  let level: { value: Json; parent: Place | null; path: (string | number)[] }[] = [{ value: root, parent: null, path: [] }];
  let visited = 0;
  for (let depth = 0; depth <= WALK.maxDepth && level.length > 0; depth++) {
    const next: typeof level = [];
    for (const { value, parent, path } of level) {
      if (visited >= WALK.maxNodes) return places;
      // Children past the node count are never visited: not queued either.
      const room = () => visited + next.length < WALK.maxNodes;
      if (Array.isArray(value)) {
        visited++;
        for (const [index, item] of value.entries()) {
          if (!room()) break;
          if (typeof item === 'object' && item !== null) next.push({ value: item, parent, path: [...path, index] });
        }
      } else if (isObject(value)) {
        visited++;
        const place = { node: value, parent, path };
        places.push(place);
        for (const key in value) {
          if (!room()) break;
          const child = value[key];
          if (typeof child === 'object' && child !== null) next.push({ value: child, parent: place, path: [...path, key] });
        }
      }
    }
    level = next;
  }
  return places;
}

/** A field's text, trimmed; null when it is no text a reference or a word could be. */
export function textOf(value: Json): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  return text !== '' && text.length <= LIMITS.referenceMaxLength ? text : null;
}

/** Each place holding one of `names` as text, in order of the names, then of the walk. */
export function found(places: Place[], names: readonly string[]): { text: string; place: Place }[] {
  const hits: { text: string; place: Place }[] = [];
  for (const name of names) {
    for (const place of places) {
      const text = Object.hasOwn(place.node, name) ? textOf(place.node[name]) : null;
      if (text !== null) hits.push({ text, place });
    }
  }
  return hits;
}

/** The one value all of `values` agree on; null when there is none, or they disagree. */
export function agreed<T>(values: readonly (T | null)[]): T | null {
  const distinct = new Set(values.filter((v) => v !== null));
  return distinct.size === 1 ? [...distinct][0]! : null;
}
