import { describe, expect, it } from 'vitest';
import type { LaneSummary } from '../../src/session/state.js';
import {
  filterLanes,
  initialUiState,
  type UiAction,
  type UiState,
  uiReducer,
} from '../../src/session/ui-reducer.js';

const run = (actions: UiAction[], from: UiState = initialUiState) => actions.reduce(uiReducer, from);

const LANES: LaneSummary[] = [
  { name: 'baseline', description: 'sequential prefill, before the batched-prefill fix', env: {} },
  { name: 'batched-prefill', description: 'adds NSA_PREFILL_BATCHED=1', env: { NSA_PREFILL_BATCHED: '1' } },
  { name: 'fp32', description: 'fp32 precision', env: {} },
];

describe('uiReducer overlays', () => {
  it('toggles help on and off', () => {
    expect(run([{ type: 'toggleHelp' }]).overlay).toBe('help');
    expect(run([{ type: 'toggleHelp' }, { type: 'toggleHelp' }]).overlay).toBe('none');
  });

  it('opens the quit confirm and closes it', () => {
    expect(run([{ type: 'openQuit' }]).overlay).toBe('quit');
    expect(run([{ type: 'openQuit' }, { type: 'close' }]).overlay).toBe('none');
  });

  it('opens the lane picker with an empty filter', () => {
    const s = run([
      { type: 'openLanes' },
      { type: 'pickerType', text: 'x' },
      { type: 'close' },
      { type: 'openLanes' },
    ]);
    expect(s.overlay).toBe('lanes');
    expect(s.picker).toEqual({ filter: '', index: 0 });
  });

  it('does not mutate the state it is given', () => {
    const before = structuredClone(initialUiState);
    run([
      { type: 'openLanes' },
      { type: 'pickerType', text: 'b' },
      { type: 'scroll', delta: 3, maxScroll: 10 },
    ]);
    expect(initialUiState).toEqual(before);
  });
});

describe('uiReducer lane picker', () => {
  it('types, backspaces and resets the selection on each filter change', () => {
    let s = run([{ type: 'openLanes' }, { type: 'pickerMove', delta: 2, count: 3 }]);
    expect(s.picker.index).toBe(2);
    s = run(
      [
        { type: 'pickerType', text: 'bat' },
        { type: 'pickerType', text: 'ch' },
      ],
      s,
    );
    expect(s.picker).toEqual({ filter: 'batch', index: 0 });
    s = run([{ type: 'pickerBackspace' }], s);
    expect(s.picker.filter).toBe('batc');
  });

  it('clamps the selection to the filtered list', () => {
    const s = run([{ type: 'openLanes' }, { type: 'pickerMove', delta: -1, count: 3 }]);
    expect(s.picker.index).toBe(0);
    expect(run([{ type: 'pickerMove', delta: 10, count: 3 }], s).picker.index).toBe(2);
    expect(run([{ type: 'pickerMove', delta: 1, count: 0 }], s).picker.index).toBe(0);
  });

  it('goes to the confirm step with the chosen lane, and back to the list on n', () => {
    let s = run([
      { type: 'openLanes' },
      { type: 'pickerType', text: 'batch' },
      { type: 'pickerChoose', lane: 'batched-prefill' },
    ]);
    expect(s.overlay).toBe('confirmLane');
    expect(s.picker.chosen).toBe('batched-prefill');
    s = run([{ type: 'confirmBack' }], s);
    expect(s.overlay).toBe('lanes');
    expect(s.picker.filter).toBe('batch');
    expect(s.picker.chosen).toBeUndefined();
  });
});

describe('uiReducer log scrolling', () => {
  it('scrolls up within the limit and stops following', () => {
    const s = run([{ type: 'scroll', delta: 5, maxScroll: 3 }]);
    expect(s).toMatchObject({ logScroll: 3, follow: false });
  });

  it('follows again when scrolled back to the bottom or on G', () => {
    expect(
      run([
        { type: 'scroll', delta: 2, maxScroll: 9 },
        { type: 'scroll', delta: -5, maxScroll: 9 },
      ]),
    ).toMatchObject({
      logScroll: 0,
      follow: true,
    });
    expect(run([{ type: 'scroll', delta: 2, maxScroll: 9 }, { type: 'follow' }])).toMatchObject({
      logScroll: 0,
      follow: true,
    });
  });

  it('keeps a scrolled-up view on the same lines while output grows', () => {
    const s = run([
      { type: 'scroll', delta: 2, maxScroll: 9 },
      { type: 'logGrew', added: 3, maxScroll: 12 },
    ]);
    expect(s.logScroll).toBe(5);
  });

  it('stays at the bottom while following', () => {
    expect(run([{ type: 'logGrew', added: 3, maxScroll: 12 }])).toBe(initialUiState);
  });

  it('returns to the bottom when the log is replaced by a new run', () => {
    expect(run([{ type: 'scroll', delta: 4, maxScroll: 9 }, { type: 'logReset' }])).toMatchObject({
      logScroll: 0,
      follow: true,
    });
  });
});

describe('filterLanes', () => {
  it('puts name matches before description matches, case-insensitively', () => {
    expect(filterLanes(LANES, 'BATCH').map((l) => l.name)).toEqual(['batched-prefill', 'baseline']);
  });

  it('returns every lane for an empty filter and none for a miss', () => {
    expect(filterLanes(LANES, '  ')).toHaveLength(3);
    expect(filterLanes(LANES, 'zzz')).toEqual([]);
  });
});
