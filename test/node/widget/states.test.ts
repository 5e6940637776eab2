/**
 * The widget's custom states come from one list (src/screens.ts): the element's `@cssstate` JSDoc,
 * from which the custom-elements manifest is made, must say the same states, in the same order, with
 * the same text.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { SCREENS, STATE_DESCRIPTIONS, STATES } from '../../../src/screens.ts';

const source = readFileSync(new URL('../../../src/pix-checkout.ts', import.meta.url), 'utf8');

test("the element's @cssstate JSDoc lists every state of src/screens.ts, in order, with its description", () => {
  const documented = [...source.matchAll(/^ \* @cssstate (\S+) - (.+)$/gm)].map(([, name, text]) => [name, text]);
  assert.deepEqual(
    documented,
    STATES.map((name) => [name, STATE_DESCRIPTIONS[name]]),
    `write these lines in src/pix-checkout.ts's header:\n${STATES.map((name) => ` * @cssstate ${name} - ${STATE_DESCRIPTIONS[name]}`).join('\n')}`,
  );
});

test('every screen is a state, and the states are the screens and reconnecting', () => {
  assert.deepEqual(STATES, [...SCREENS, 'reconnecting']);
  assert.equal(new Set(STATES).size, STATES.length, 'no state twice');
});
