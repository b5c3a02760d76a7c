import { describe, expect, it } from 'vitest';
import { routeKey } from '../../panels/key-router.js';
import { BINDINGS, commandForKey } from '../../src/session/keymap.js';
import { initialUiState } from '../../src/session/ui-reducer.js';

describe('the binding table', () => {
  it('dispatches every key it documents', () => {
    expect(commandForKey('d', {})).toBe('dump');
    expect(commandForKey('l', {})).toBe('lanes');
    expect(commandForKey('q', {})).toBe('quit');
    expect(commandForKey('c', { ctrl: true })).toBe('quit');
    expect(commandForKey('', { upArrow: true })).toBe('scrollUp');
    expect(commandForKey('j', {})).toBe('scrollDown');
    expect(commandForKey('?', {})).toBe('help');
    for (const b of BINDINGS) expect(b.keys.length, b.command).toBeGreaterThan(0);
  });

  it('treats a burst of one key as that key and ignores pastes', () => {
    expect(commandForKey('dd', {})).toBe('dump');
    expect(commandForKey('dq', {})).toBeNull();
    expect(commandForKey('c', {})).toBeNull();
  });

  it('Ctrl+C opens the quit prompt and a second Ctrl+C confirms it', () => {
    const ctx = { lanes: [], logPage: 10, maxScroll: 0 };
    const open = routeKey('c', { ctrl: true }, initialUiState, ctx as never);
    expect(open.actions).toEqual([{ type: 'openQuit' }]);
    const confirm = routeKey('c', { ctrl: true }, { ...initialUiState, overlay: 'quit' }, ctx as never);
    expect(confirm.effect).toEqual({ kind: 'quit' });
  });

  it('Ctrl+Z suspends, from the dashboard and from an overlay alike (the overlay stays open)', () => {
    const ctx = { lanes: [], logPage: 10, maxScroll: 0 };
    expect(commandForKey('z', { ctrl: true })).toBe('suspend');
    expect(commandForKey('z', {})).toBeNull();
    for (const overlay of ['none', 'help', 'lanes', 'quit'] as const)
      expect(routeKey('z', { ctrl: true }, { ...initialUiState, overlay }, ctx as never)).toEqual({
        actions: [],
        effect: { kind: 'suspend' },
      });
    // in the lane filter a plain z is typed
    expect(routeKey('z', {}, { ...initialUiState, overlay: 'lanes' }, ctx as never).effect).toBeUndefined();
  });
});

describe('the lane picker under fast input', () => {
  it('a chunk "batch\\r" filters and chooses in one go', () => {
    const lanes = [
      { name: 'baseline', description: 'seq', env: {} },
      { name: 'batched-prefill', description: 'fix', env: {} },
    ];
    const ui = { ...initialUiState, overlay: 'lanes' as const };
    const r = routeKey('batch\r', {}, ui, { lanes, logPage: 10, maxScroll: 0 });
    expect(r.actions).toEqual([
      { type: 'pickerType', text: 'batch' },
      { type: 'pickerChoose', lane: 'batched-prefill' },
    ]);
  });
});
