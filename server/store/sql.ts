/** Small helpers both stores' statements share. */

/**
 * A fixed list of words (states from domain/'s rules) as an SQL list of literals, `'a', 'b'`, for an
 * `IN (...)`: the rule's own list is written into the statement, never a copy of it. Only plain
 * lowercase words are accepted: nothing from outside ever reaches here.
 */
export function sqlWords(words: readonly string[]): string {
  for (const word of words) if (!/^[a-z_]+$/.test(word)) throw new Error(`not a plain word: ${word}`);
  return words.map((word) => `'${word}'`).join(', ');
}
