import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeNotebookKey } from '../../../panels/notebook/route.js';
import { validateLane } from '../../../src/lanes/lane.js';
import { loadLanes } from '../../../src/lanes/load.js';
import { compareCells } from '../../../src/notebook/compare.js';
import { flipFlag, isBinaryFlag, knownFlags, valueChoices } from '../../../src/notebook/flags.js';
import { NOTEBOOK_BINDINGS, notebookCommandForKey, parsePalette } from '../../../src/notebook/keymap.js';
import { parseNotebook } from '../../../src/notebook/store.js';
import { initialNotebookUi, type NotebookUi, notebookUiReducer } from '../../../src/notebook/view-reducer.js';

const NB = join(import.meta.dirname, '..', '..', 'fixtures', 'report', 'notebook.json');
const cells = parseNotebook(readFileSync(NB, 'utf8'), NB).cells;
const lanes = [...loadLanes().values()];
const ctx = { cells, lanes: lanes, flags: knownFlags(lanes), running: null };

/** feed keys through router and reducer as the App does; collect the effects */
function press(keys: Array<string | { [k: string]: boolean }>, ui: NotebookUi = initialNotebookUi) {
  const effects: unknown[] = [];
  for (const k of keys) {
    const [input, flags] = typeof k === 'string' ? [k, {}] : ['', k];
    const r = routeNotebookKey(input, flags, ui, ctx);
    ui = r.actions.reduce(notebookUiReducer, ui);
    if (r.effect) effects.push(r.effect);
  }
  return { ui, effects };
}

describe('notebook keys and palette', () => {
  it('Ctrl+Z suspends from the list and from a picker, which stays open to come back to', () => {
    expect(routeNotebookKey('z', { ctrl: true }, initialNotebookUi, ctx)).toEqual({
      actions: [],
      effect: { kind: 'suspend' },
    });
    const picker = press(['n']).ui;
    expect(picker.mode).toBe('lanes');
    expect(routeNotebookKey('z', { ctrl: true }, picker, ctx)).toEqual({
      actions: [],
      effect: { kind: 'suspend' },
    });
    expect(press(['z'], picker).ui.pick.text).toBe('z');
  });

  it('one table: every binding with a key dispatches, palette words resolve to the same commands', () => {
    for (const b of NOTEBOOK_BINDINGS) {
      for (const key of b.keys.filter((k) => /^[ -~]$/.test(k)))
        expect(notebookCommandForKey(key, {})).toBe(b.command);
      if (b.palette && b.palette !== 'lane') expect(parsePalette(b.palette)).toEqual({ command: b.command });
    }
    expect(parsePalette('lane fa2')).toEqual({ command: 'new', arg: 'fa2' });
    expect(parsePalette('rep')).toEqual({ command: 'report' });
    expect(parsePalette('lane')).toEqual({ error: expect.stringContaining(':lane needs a lane name') });
    expect(parsePalette('nope')).toEqual({ error: expect.stringContaining('unknown command :nope') });
  });

  it(':bisect starts on the two marked cells and shows the table; without marks it says what to do', () => {
    expect(press([':', 'bisect', { return: true }]).effects).toEqual([
      { kind: 'notice', text: 'mark a GO cell and a NO-GO cell with m, then :bisect' },
    ]);
    const r = press(['m', 'j', 'm', ':', 'bis', { return: true }]);
    expect(r.effects).toEqual([{ kind: 'bisect', a: 'c1', b: 'c2' }]);
    expect(r.ui.mode).toBe('bisect');
    expect(press([{ escape: true }], r.ui).ui.mode).toBe('list');
  });

  it('j/k move within the cells; m marks at most two; c needs two marks', () => {
    expect(press(Array(20).fill('j')).ui.selected).toBe(11);
    expect(press(['k']).ui.selected).toBe(0);
    expect(press(['c']).effects).toEqual([{ kind: 'notice', text: 'mark two cells with m first' }]);
    const { ui } = press(['m', 'j', 'm', 'j', 'm', 'c']);
    expect(ui.marked).toEqual(['c2', 'c3']);
    expect(ui.mode).toBe('compare');
  });

  it('x asks and defaults to No: Enter or n keeps the cell, y deletes it', () => {
    expect(press(['j', 'x']).ui.mode).toBe('confirmDelete');
    expect(press(['j', 'x', { return: true }]).effects).toEqual([]);
    expect(press(['j', 'x', 'n']).effects).toEqual([]);
    expect(press(['j', 'x', 'y']).effects).toEqual([{ kind: 'delete', id: 'c2' }]);
  });

  it('env editor: space flips the highlighted flag 0↔1, f picks a known flag, Enter runs the edit as a new cell', () => {
    // c1 baseline: NSA_DISABLE_AUX_STATS, NSA_DISABLE_CSV_LOGS, NSA_HEARTBEAT_EVERY, NSA_TB_DISABLE
    let r = press(['e', ' ']);
    expect(r.ui.env?.edits).toEqual({ NSA_DISABLE_AUX_STATS: '0' });
    r = press(['e', ' ', ' ']);
    expect(r.ui.env?.edits).toEqual({ NSA_DISABLE_AUX_STATS: '1' });
    r = press(['e', 'f', 'p', 'r', 'e', 'f', 'i', 'l', 'l', { return: true }]);
    expect(r.ui.mode).toBe('env');
    expect(r.ui.env?.edits).toEqual({ NSA_PREFILL_BATCHED: '1' });
    r = press(['e', 'f', 'p', 'r', 'e', 'f', 'i', 'l', 'l', { return: true }, { return: true }]);
    expect(r.effects).toEqual([{ kind: 'runEdited', id: 'c1', edits: { NSA_PREFILL_BATCHED: '1' } }]);
    expect(r.ui.mode).toBe('list');
    expect(press(['e', { escape: true }]).effects).toEqual([]);
  });

  it('n picks a lane by filter; the palette runs :lane NAME, :report and :quit', () => {
    expect(press(['n', 'b', 'a', 't', 'c', 'h', { return: true }]).effects).toEqual([
      { kind: 'start', lane: 'batched-prefill' },
    ]);
    expect(press([':', 'l', 'a', 'n', 'e', ' ', 'f', 'p', '1', '6', { return: true }]).effects).toEqual([
      { kind: 'start', lane: 'fp16' },
    ]);
    expect(press([':', 'r', 'e', 'p', { return: true }]).effects).toEqual([{ kind: 'report' }]);
    expect(press([':', 'q', 'u', 'i', 't', { return: true }]).effects).toEqual([{ kind: 'quit' }]);
    expect(press(['r']).effects).toEqual([{ kind: 'rerun', id: 'c1' }]);
  });

  it('env editor: = types a value for the highlighted variable; a non-0/1 flag offers its values', () => {
    // c1's first variable is NSA_DISABLE_AUX_STATS
    let r = press(['e', '=', '7', { return: true }]);
    expect(r.ui.mode).toBe('env');
    expect(r.ui.env?.edits).toEqual({ NSA_DISABLE_AUX_STATS: '7' });
    // f, NSA_FORCE_BRANCH: the value entry opens (no "=1"); ↓ picks the second value
    r = press(['e', 'f', 'F', 'O', 'R', 'C', 'E', '_', 'B', { return: true }]);
    expect(r.ui.mode).toBe('value');
    expect(r.ui.env?.editing).toBe('NSA_FORCE_BRANCH');
    r = press([{ downArrow: true }, { return: true }], r.ui);
    expect(r.ui.env?.edits).toEqual({ NSA_FORCE_BRANCH: 'sel' });
    // Esc in the value entry goes back to the editor, nothing set
    r = press(['e', '=', 'x', { escape: true }]);
    expect([r.ui.mode, r.ui.env?.edits]).toEqual(['env', {}]);
    // Enter with no real change runs nothing
    expect(press(['e', '=', '1', { return: true }, { return: true }]).effects).toEqual([
      { kind: 'notice', text: expect.stringContaining('no change yet') },
    ]);
  });

  it('queued cells: their rows follow the cells; x takes one off the queue, Enter says it has not run', () => {
    // the first four cells, then one queued
    const queued = {
      ...ctx,
      cells: cells.slice(0, 4),
      running: 'c4',
      queued: [{ qid: 'q1', lane: 'fa2', what: 'toggle of c4: NSA_USE_FA2=0' }],
    };
    const go = (keys: Array<string | { [k: string]: boolean }>) => {
      let ui = initialNotebookUi;
      const effects: unknown[] = [];
      for (const k of keys) {
        const [input, flags] = typeof k === 'string' ? [k, {}] : ['', k];
        const r = routeNotebookKey(input, flags, ui, queued);
        ui = r.actions.reduce(notebookUiReducer, ui);
        if (r.effect) effects.push(r.effect);
      }
      return { ui, effects };
    };
    expect(go(['j', 'j', 'j', 'j', 'j']).ui.selected).toBe(4);
    expect(go(['j', 'j', 'j', 'j', { return: true }]).effects).toEqual([
      { kind: 'notice', text: 'q1 fa2 has not run yet (x takes it off the queue)' },
    ]);
    expect(go(['j', 'j', 'j', 'j', 'x', 'y']).effects).toEqual([{ kind: 'unqueue', qid: 'q1' }]);
    // quitting drops the queue: it asks first, even with nothing running
    expect(routeNotebookKey('q', {}, initialNotebookUi, { ...queued, running: null }).actions).toEqual([
      { type: 'open', mode: 'quit' },
    ]);
  });

  it('q asks first while a cell runs', () => {
    const running = { ...ctx, running: 'c4' };
    const r1 = routeNotebookKey('q', {}, initialNotebookUi, running);
    const ui = r1.actions.reduce(notebookUiReducer, initialNotebookUi);
    expect(ui.mode).toBe('quit');
    expect(routeNotebookKey('y', {}, ui, running).effect).toEqual({ kind: 'quit' });
    expect(routeNotebookKey('q', {}, initialNotebookUi, ctx).effect).toEqual({ kind: 'quit' });
  });
});

describe('flags, compare, phases', () => {
  it('knows the lanes’ flags with descriptions; the flip is 1↔0', () => {
    const f = knownFlags(lanes).find((x) => x.name === 'NSA_PREFILL_BATCHED')!;
    expect(f.description).toMatch(/vectorized prefill/);
    expect(f.lanes.map((l) => l.lane)).toContain('batched-prefill');
    expect([flipFlag('1'), flipFlag('0'), flipFlag(undefined), flipFlag('true')]).toEqual([
      '0',
      '1',
      '1',
      '1',
    ]);
  });

  it('offers the values the trainer table and the lanes know; typed text first', () => {
    const flags = knownFlags(lanes);
    expect(valueChoices(flags, 'NSA_FORCE_BRANCH', '')).toEqual(['cmp', 'sel', 'win']);
    expect(valueChoices(flags, 'NSA_FORCE_BRANCH', 'w')).toEqual(['w', 'win']);
    expect(valueChoices(flags, 'NSA_FORCE_BRANCH', 'sel')).toEqual(['sel']);
    expect(valueChoices(flags, 'UNKNOWN_VAR', 'abc')).toEqual(['abc']);
    const byName = (n: string) => flags.find((f) => f.name === n);
    expect(isBinaryFlag(byName('NSA_PREFILL_BATCHED'))).toBe(true);
    expect(isBinaryFlag(byName('NSA_FORCE_BRANCH'))).toBe(false);
  });

  it('compares env, command and summary of two cells', () => {
    const cmp = compareCells(cells[0]!, cells[1]!);
    expect(cmp.env).toEqual([{ name: 'NSA_PREFILL_BATCHED', a: null, b: '1' }]);
    expect(cmp.command).toEqual({ onlyA: [], onlyB: [] });
    expect(cmp.summary.find((r) => r.label === 'GO/NO-GO')).toEqual({
      label: 'GO/NO-GO',
      a: 'NO-GO',
      b: 'GO',
    });
    expect(cmp.summary.find((r) => r.label === 'hang / NaN / crash')?.a).toBe('hang step 6 (in-step)');
    // a hung run is not ranked against one that finished
    expect(cmp.ab).toEqual([`not ranked: ${cells[0]!.id} did not finish`]);
  });

  it('B against A with a 95 % interval: step time and toks/s from their per-step values', () => {
    const done = cells.find((c) => c.id === 'c2')!;
    const steady = (n: number, mean: number) =>
      Array.from({ length: n }, (_, i): [number, number] => [i + 1, mean * (1 + 0.02 * Math.sin(i * 2.4))]);
    const a = {
      ...done,
      id: 'cA',
      series: { ...done.series, toks: steady(200, 100), stepMs: steady(200, 50) },
    };
    const b = {
      ...done,
      id: 'cB',
      series: { ...done.series, toks: steady(200, 97), stepMs: steady(200, 51.5) },
    };
    const cmp = compareCells(a, b);
    expect(cmp.ab[0]).toMatch(/^step time: cB 3\.0 % longer than cA \(95 % CI/);
    expect(cmp.ab[1]).toMatch(/^toks\/s: cB 3\.0 % lower than cA/);
    expect(compareCells(a, { ...a, id: 'cA2' }).ab[0]).toMatch(/^step time: no difference detectable at ±/);
  });

  it('a lane declares smoke-ladder phases; bad ones name the field', () => {
    const p = validateLane({ name: 'l', phases: [{ steps: 1 }, { steps: 200 }] }, 'l.yaml');
    expect(p.phases).toEqual([{ steps: 1 }, { steps: 200 }]);
    expect(() => validateLane({ name: 'l', phases: [{ step: 1 }] }, 'l.yaml')).toThrow(
      'l.yaml: field "phases[0].step"',
    );
    expect(() => validateLane({ name: 'l', phases: [] }, 'l.yaml')).toThrow('field "phases"');
    expect(loadLanes().get('smoke-ladder')?.phases).toEqual([{ steps: 1 }, { steps: 200 }]);
  });
});
