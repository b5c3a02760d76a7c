import type { InkKeyFlags } from './key-router.js';

/**
 * Keys typed fast (or sent by tmux, or delivered together by a loaded machine) arrive as one chunk
 * ("dq"): outside a text field each character is its own key, or the chunk matches no binding and
 * every key in it is lost. Inside a text field (`text`) the chunk is typed text and stays whole.
 */
export function splitKeys(input: string, key: InkKeyFlags, text: boolean): Array<[string, InkKeyFlags]> {
  if (input.length <= 1 || key.ctrl || key.meta || text) return [[input, key]];
  return [...input].map((c): [string, InkKeyFlags] => (c === '\r' ? ['', { return: true }] : [c, {}]));
}
