/**
 * Keys as data: every table names its keys, and matching and labels both come from the names. A
 * name no key has, or one key bound twice in a table, is caught here rather than by a user whose
 * key silently does the first row's command.
 */
import { describe, expect, it } from 'vitest';
import { ENV_BINDINGS, NOTEBOOK_BINDINGS } from '../../src/notebook/keymap.js';
import { type Binding, bindingMatches, commandIn, keyMatcher } from '../../src/session/key-binding.js';
import { BINDINGS } from '../../src/session/keymap.js';

const TABLES: Record<string, readonly Binding<string, never>[]> = {
  dashboard: BINDINGS,
  notebook: NOTEBOOK_BINDINGS,
  'env editor': ENV_BINDINGS,
};

describe('key names', () => {
  it('match the key events they name, and nothing else', () => {
    expect(keyMatcher('↑')('', { upArrow: true })).toBe(true);
    expect(keyMatcher('↑')('k', {})).toBe(false);
    expect(keyMatcher('PgDn')('', { pageDown: true })).toBe(true);
    expect(keyMatcher('Enter')('\r', { return: true })).toBe(true);
    expect(keyMatcher('Esc')('', { escape: true })).toBe(true);
    expect(keyMatcher('space')(' ', {})).toBe(true);
    expect(keyMatcher('Ctrl+C')('c', { ctrl: true })).toBe(true);
    expect(keyMatcher('Ctrl+C')('c', {})).toBe(false);
    // a plain letter is not the same letter with Ctrl or Meta held
    expect(keyMatcher('q')('q', {})).toBe(true);
    expect(keyMatcher('q')('q', { ctrl: true })).toBe(false);
    expect(keyMatcher('q')('q', { meta: true })).toBe(false);
    expect(keyMatcher('G')('g', {})).toBe(false);
  });

  it('a name that is no key is refused', () => {
    expect(() => keyMatcher('F5')).toThrow(/no key is named "F5"/);
    expect(() => keyMatcher('Ctrl+')).toThrow();
    expect(() => keyMatcher('')).toThrow();
  });
});

describe.each(Object.entries(TABLES))('the %s table', (_name, table) => {
  it('every key it shows is a key, and each key does one command', () => {
    const owner = new Map<string, string>();
    for (const b of table) {
      expect(b.keys.length, b.command).toBeGreaterThan(0);
      for (const k of b.keys) {
        expect(() => keyMatcher(k), `${b.command}: ${k}`).not.toThrow();
        expect(owner.get(k), `${k} bound to ${owner.get(k)} and ${b.command}`).toBeUndefined();
        owner.set(k, b.command);
      }
    }
  });

  it('dispatch finds each row by each of its keys (no earlier row takes it)', () => {
    const events: Record<string, [string, object]> = {
      '↑': ['', { upArrow: true }],
      '↓': ['', { downArrow: true }],
      PgUp: ['', { pageUp: true }],
      PgDn: ['', { pageDown: true }],
      Enter: ['\r', { return: true }],
      Esc: ['', { escape: true }],
      space: [' ', {}],
    };
    for (const b of table)
      for (const k of b.keys) {
        const ctrl = /^Ctrl\+(.)$/.exec(k);
        const [input, flags] = events[k] ?? (ctrl ? [ctrl[1]!.toLowerCase(), { ctrl: true }] : [k, {}]);
        expect(commandIn(table, input, flags), k).toBe(b.command);
        expect(bindingMatches(b, input, flags)).toBe(true);
      }
  });
});

describe('a burst of one key counts once; a paste is nothing', () => {
  it('in every table', () => {
    expect(commandIn(BINDINGS, 'dd', {})).toBe('dump');
    expect(commandIn(BINDINGS, 'dq', {})).toBeNull();
    expect(commandIn(NOTEBOOK_BINDINGS, 'jjj', {})).toBe('down');
    expect(commandIn(ENV_BINDINGS, 'jj', {})).toBe('down');
    expect(commandIn(ENV_BINDINGS, 'ju', {})).toBeNull();
  });
});
