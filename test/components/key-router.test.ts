import { describe, expect, it } from 'vitest';
import { type KeyContext, routeKey } from '../../panels/key-router.js';
import { initialUiState, type UiState } from '../../src/session/ui-reducer.js';
import { DEFAULT_LANES } from '../helpers/fake-controller.js';

const ctx: KeyContext = { lanes: DEFAULT_LANES, logPage: 10, maxScroll: 50 };
const ui = (partial: Partial<UiState>): UiState => ({ ...initialUiState, ...partial });

describe('routeKey on the dashboard', () => {
  it('maps the bound keys to actions and effects', () => {
    expect(routeKey('d', {}, initialUiState, ctx)).toEqual({ actions: [], effect: { kind: 'dump' } });
    expect(routeKey('l', {}, initialUiState, ctx).actions).toEqual([{ type: 'openLanes' }]);
    expect(routeKey('q', {}, initialUiState, ctx).actions).toEqual([{ type: 'openQuit' }]);
    expect(routeKey('?', {}, initialUiState, ctx).actions).toEqual([{ type: 'toggleHelp' }]);
    expect(routeKey('G', {}, initialUiState, ctx).actions).toEqual([{ type: 'follow' }]);
  });

  it('s samples hot frames; q while the run is being stopped kills at once instead of asking', () => {
    expect(routeKey('s', {}, initialUiState, ctx)).toEqual({ actions: [], effect: { kind: 'hotFrames' } });
    expect(routeKey('q', {}, initialUiState, { ...ctx, stopping: true })).toEqual({
      actions: [],
      effect: { kind: 'killNow' },
    });
  });

  it('scrolls by a line on arrows and j/k, by a page on PgUp/PgDn', () => {
    expect(routeKey('', { upArrow: true }, initialUiState, ctx).actions).toEqual([
      { type: 'scroll', delta: 1, maxScroll: 50 },
    ]);
    expect(routeKey('j', {}, initialUiState, ctx).actions).toEqual([
      { type: 'scroll', delta: -1, maxScroll: 50 },
    ]);
    expect(routeKey('', { pageUp: true }, initialUiState, ctx).actions).toEqual([
      { type: 'scroll', delta: 9, maxScroll: 50 },
    ]);
  });

  it('says so for a typed key that is not bound; ignores pastes', () => {
    expect(routeKey('x', {}, initialUiState, ctx)).toEqual({
      actions: [],
      effect: { kind: 'notice', text: 'x is not a key here: ? lists the keys' },
    });
    expect(routeKey('dlq', {}, initialUiState, ctx)).toEqual({ actions: [] });
    expect(routeKey('', { escape: true }, initialUiState, ctx)).toEqual({ actions: [] });
  });

  it('a finished run: d, s and t say why they cannot act; scrolling and help still work', () => {
    const ended = { ...ctx, keys: { ended: true, laneLocked: null, quitAsks: true } };
    for (const k of ['d', 's', 't']) {
      const r = routeKey(k, {}, initialUiState, ended);
      expect(r.actions).toEqual([]);
      expect(r.effect).toMatchObject({ kind: 'notice', text: expect.stringMatching(/^the run has ended: /) });
    }
    expect(routeKey('k', {}, initialUiState, ended).actions).toEqual([
      { type: 'scroll', delta: 1, maxScroll: 50 },
    ]);
    expect(routeKey('?', {}, initialUiState, ended).actions).toEqual([{ type: 'toggleHelp' }]);
  });

  it("a notebook cell's dashboard: q goes straight back (no prompt), l says the cell keeps its lane", () => {
    const cell = { ...ctx, keys: { ended: false, laneLocked: 'a cell keeps its lane', quitAsks: false } };
    expect(routeKey('q', {}, initialUiState, cell)).toEqual({ actions: [], effect: { kind: 'quit' } });
    expect(routeKey('l', {}, initialUiState, cell)).toEqual({
      actions: [],
      effect: { kind: 'notice', text: 'a cell keeps its lane' },
    });
    expect(routeKey('d', {}, initialUiState, cell)).toEqual({ actions: [], effect: { kind: 'dump' } });
  });
});

describe('routeKey in overlays', () => {
  it('sends typed text, even command letters, to the lane filter', () => {
    const lanes = ui({ overlay: 'lanes' });
    expect(routeKey('q', {}, lanes, ctx).actions).toEqual([{ type: 'pickerType', text: 'q' }]);
    expect(routeKey('batch', {}, lanes, ctx).actions).toEqual([{ type: 'pickerType', text: 'batch' }]);
    expect(routeKey('', { backspace: true }, lanes, ctx).actions).toEqual([{ type: 'pickerBackspace' }]);
    expect(routeKey('', { delete: true }, lanes, ctx).actions).toEqual([{ type: 'pickerBackspace' }]);
    expect(routeKey('', { escape: true, meta: true }, lanes, ctx).actions).toEqual([{ type: 'close' }]);
  });

  it('chooses the selected match on Enter and moves within the matches', () => {
    const s = ui({ overlay: 'lanes', picker: { filter: 'batch', index: 0 } });
    expect(routeKey('\r', { return: true }, s, ctx).actions).toEqual([
      { type: 'pickerChoose', lane: 'batched-prefill' },
    ]);
    expect(routeKey('', { downArrow: true }, s, ctx).actions).toEqual([
      { type: 'pickerMove', delta: 1, count: 1 },
    ]);
    const none = ui({ overlay: 'lanes', picker: { filter: 'zzz', index: 0 } });
    expect(routeKey('\r', { return: true }, none, ctx)).toEqual({ actions: [] });
  });

  it('switches lane on y in the confirm step, goes back on n, cancels on Esc', () => {
    const s = ui({
      overlay: 'confirmLane',
      picker: { filter: 'batch', index: 0, chosen: 'batched-prefill' },
    });
    expect(routeKey('y', {}, s, ctx)).toEqual({
      actions: [{ type: 'close' }],
      effect: { kind: 'switchLane', lane: 'batched-prefill' },
    });
    expect(routeKey('n', {}, s, ctx).actions).toEqual([{ type: 'confirmBack' }]);
    expect(routeKey('', { escape: true }, s, ctx).actions).toEqual([{ type: 'close' }]);
    expect(routeKey('d', {}, s, ctx)).toEqual({ actions: [] });
  });

  it('quits on y (also "yy" typed fast), stays on n or Esc', () => {
    const s = ui({ overlay: 'quit' });
    expect(routeKey('y', {}, s, ctx).effect).toEqual({ kind: 'quit' });
    expect(routeKey('yy', {}, s, ctx).effect).toEqual({ kind: 'quit' });
    expect(routeKey('n', {}, s, ctx).actions).toEqual([{ type: 'close' }]);
    expect(routeKey('', { escape: true }, s, ctx).actions).toEqual([{ type: 'close' }]);
    expect(routeKey('d', {}, s, ctx)).toEqual({ actions: [] });
  });

  it('closes help on ?, Esc or q and ignores other keys behind it', () => {
    const s = ui({ overlay: 'help' });
    expect(routeKey('?', {}, s, ctx).actions).toEqual([{ type: 'close' }]);
    expect(routeKey('', { escape: true }, s, ctx).actions).toEqual([{ type: 'close' }]);
    expect(routeKey('q', {}, s, ctx).actions).toEqual([{ type: 'close' }]);
    expect(routeKey('d', {}, s, ctx)).toEqual({ actions: [] });
  });
});
