// The box check as a notebook cell: its life through the reducer, the file (written atomically by
// the store, read back after a reload; older files without check cells still load), the keys that
// start it, and the controller that runs it in the task slot. The check results are judged from a
// real H100 capture (test/fixtures/preflight), so a cell holds what `nsa-dbg check` would say.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { routeNotebookKey } from '../../../panels/notebook/route.js';
import { bisectCells } from '../../../src/bisect/cells.js';
import { loadLanes } from '../../../src/lanes/load.js';
import {
  boxSeen,
  checkedPatch,
  checkFailedPatch,
  checkLine,
  latestChecks,
  newCheckCell,
} from '../../../src/notebook/check-cell.js';
import { NotebookController } from '../../../src/notebook/controller.js';
import type { NotebookDeps } from '../../../src/notebook/controller-types.js';
import {
  footerHints,
  keyOf,
  NOTEBOOK_BINDINGS,
  newBoxOffer,
  parsePalette,
} from '../../../src/notebook/keymap.js';
import { NotebookFormatError } from '../../../src/notebook/migrate.js';
import type { Cell, LaneSnapshot } from '../../../src/notebook/model.js';
import { emptyNotebook } from '../../../src/notebook/model.js';
import { recoverCells } from '../../../src/notebook/recover.js';
import { notebookReducer } from '../../../src/notebook/reducer.js';
import { NotebookStore, parseNotebook, readNotebook } from '../../../src/notebook/store.js';
import { initialNotebookUi, notebookUiReducer } from '../../../src/notebook/view-reducer.js';
import { combine } from '../../../src/preflight/format.js';
import { judgeBox } from '../../../src/preflight/verdict.js';
import { writeReport } from '../../../src/report/write.js';
import { ask, probe } from '../preflight/fixtures.js';
import { newCell } from './cells.js';

const dir = mkdtempSync(join(tmpdir(), 'nsa-nb-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIX = join(import.meta.dirname, '..', '..', 'fixtures');
const T0 = new Date('2026-11-26T14:00:00Z');
const T1 = new Date('2026-11-26T14:00:21Z');

const lane: LaneSnapshot = {
  name: 'ddp-nccl',
  description: 'two ranks',
  source: '',
  sourceHash: '',
  env: { NCCL_P2P_DISABLE: '1' },
  args: [],
  acceptance: { finiteLoss: true, noStall: true },
};
/** a foreign process holds most of the H100's memory: NO-GO, from a real capture */
const foreign = combine('ddp-nccl', [judgeBox(probe('h100x1', 'foreign'), ask())], 21.3);
const healthy = combine('ddp-nccl', [judgeBox(probe('h100x1', 'healthy'), ask())], 12.0);

function checked(run = foreign, target = 'gpu1') {
  let nb = emptyNotebook(T0.toISOString());
  nb = notebookReducer(nb, { type: 'addCell', cell: newCheckCell({ lane, target, demo: false, now: T0 }) });
  return notebookReducer(nb, { type: 'updateCell', id: 'c1', patch: checkedPatch(run, T1) });
}

describe('the check cell through the reducer', () => {
  it('starts running with no run of its own, ends with the verdict and every check', () => {
    const started = newCheckCell({ lane, target: 'gpu1', demo: false, now: T0 });
    expect(started).toMatchObject({
      kind: 'check',
      state: 'running',
      target: 'gpu1',
      runDir: '',
      evidence: [],
    });
    expect(foreign.go).toBe(false);
    const c = checked().cells[0]!;
    expect(c).toMatchObject({ id: 'c1', kind: 'check', state: 'done', go: false, verdict: 'NO-GO' });
    expect(c.ended).toBe(T1.toISOString());
    expect(c.reasons).toEqual(foreign.reasons);
    const proc = c.check!.boxes[0]!.checks.find((k) => k.id === 'gpu.processes')!;
    expect(proc.status).toBe('fail');
    expect(proc.measured).toMatch(/MiB/);
    expect(proc.expected).not.toBe('');
    expect(proc.source).toContain('nvidia-smi');
    expect(checkLine(c)).toMatch(
      /^box check of gpu1: [1-9]\d* failed, \d+ warnings?, \d+ passed \(21\.3 s\)$/,
    );
  });

  it('a check that could not run is an error with its reason, no checks', () => {
    let nb = checked();
    nb = notebookReducer(nb, {
      type: 'addCell',
      cell: newCheckCell({ lane, target: 'gpu1', demo: false, now: T0, parent: 'c1' }),
    });
    nb = notebookReducer(nb, {
      type: 'updateCell',
      id: 'c2',
      patch: checkFailedPatch('cannot connect to gpu1', T1),
    });
    const c2 = nb.cells[1]!;
    expect(c2).toMatchObject({
      parent: 'c1',
      link: 'rerun',
      state: 'failed',
      go: false,
      reasons: ['cannot connect to gpu1'],
    });
    expect(c2.check).toBeUndefined();
    expect(checkLine(c2)).toBe('box check of gpu1: cannot connect to gpu1');
  });

  it('a box is seen once any cell ran or checked there; the newest finished check of each box is kept', () => {
    let nb = checked(foreign, 'gpu1');
    expect(boxSeen(nb.cells, 'gpu1')).toBe(true);
    expect(boxSeen(nb.cells, 'gpu2')).toBe(false);
    nb = notebookReducer(nb, { type: 'addCell', cell: newCell('baseline', { target: 'gpu2' }) });
    expect(boxSeen(nb.cells, 'gpu2')).toBe(true);
    nb = notebookReducer(nb, {
      type: 'addCell',
      cell: newCheckCell({ lane, target: 'gpu1', demo: false, now: T1 }),
    });
    nb = notebookReducer(nb, { type: 'updateCell', id: 'c3', patch: checkedPatch(healthy, T1) });
    // still running: the finished one before it stands
    nb = notebookReducer(nb, {
      type: 'addCell',
      cell: newCheckCell({ lane, target: 'gpu1', demo: false, now: T1 }),
    });
    expect(latestChecks(nb.cells).map((c) => [c.id, c.verdict])).toEqual([['c3', 'GO']]);
  });
});

describe('the check cell in the notebook file', () => {
  it('survives a reload through the store (atomic write), every check as it was', () => {
    const file = join(dir, 'reload.json');
    const store = NotebookStore.open(file, () => T0);
    store.dispatch({ type: 'addCell', cell: newCheckCell({ lane, target: 'gpu1', demo: false, now: T0 }) });
    store.dispatch({ type: 'updateCell', id: 'c1', patch: checkedPatch(foreign, T1) });
    const before = store.get().cells[0]!;
    store.close();
    const after = readNotebook(file).cells[0]!;
    expect(after).toEqual(before);
    expect(after.check!.boxes[0]!.checks.length).toBeGreaterThan(10);
    // and again through open, as the TUI reopens it
    const again = NotebookStore.open(file);
    expect(again.get().cells[0]).toEqual(before);
    again.close();
  });

  it('older files without check cells load as before (v0, v1, and the v2 report fixture)', () => {
    const v2 = join(FIX, 'report', 'notebook.json');
    const nb = parseNotebook(readFileSync(v2, 'utf8'), v2);
    expect(nb.cells.length).toBeGreaterThan(0);
    expect(nb.cells.every((c) => c.kind === undefined && c.check === undefined)).toBe(true);
    for (const f of ['v0.json', 'v1.json']) {
      const copy = join(dir, f);
      copyFileSync(join(FIX, 'notebook', f), copy);
      expect(readNotebook(copy).cells.every((c) => c.kind === undefined)).toBe(true);
    }
  });

  it('a check cell left running by an nsa-dbg that died is marked interrupted when reopened', async () => {
    const file = join(dir, 'died.json');
    const first = NotebookStore.open(file, () => T0);
    first.dispatch({ type: 'addCell', cell: newCheckCell({ lane, target: 'gpu1', demo: false, now: T0 }) });
    first.close();
    const store = NotebookStore.open(file);
    expect(await recoverCells(store)).toEqual(['c1']);
    expect(store.get().cells[0]).toMatchObject({ state: 'failed', interrupted: true, go: false });
    expect(store.get().cells[0]!.reasons![0]).toMatch(/^interrupted: nsa-dbg ended during the box check/);
    store.close();
  });

  it('a hand-edited check cell whose checks are not a list is refused, naming the cell', () => {
    const file = join(dir, 'broken.json');
    const nb = checked();
    const broken = { ...nb, cells: [{ ...nb.cells[0]!, check: { elapsedS: 1, boxes: 'x' } }] };
    writeFileSync(file, JSON.stringify(broken));
    expect(() => readNotebook(file)).toThrow(NotebookFormatError);
    expect(() => readNotebook(file)).toThrow(/cell 1 \(c1\) is a box check/);
  });
});

describe('the check key and palette command', () => {
  const lanes = [...loadLanes().values()];
  const withCells = (cells: Cell[]) => ({ cells, lanes: lanes, flags: [], running: null });
  const press = (keys: Array<string | { return: true }>, cells: Cell[]) => {
    let ui = initialNotebookUi;
    const effects: unknown[] = [];
    for (const k of keys) {
      const r = routeNotebookKey(
        typeof k === 'string' ? k : '',
        typeof k === 'string' ? {} : k,
        ui,
        withCells(cells),
      );
      ui = r.actions.reduce(notebookUiReducer, ui);
      if (r.effect) effects.push(r.effect);
    }
    return { ui, effects };
  };
  const key = keyOf('check');

  it('is one row of the key table: its key dispatches, :check resolves, the offer names both', () => {
    const b = NOTEBOOK_BINDINGS.find((x) => x.command === 'check')!;
    expect(NOTEBOOK_BINDINGS.filter((x) => x.keys.includes(key))).toHaveLength(1);
    expect(parsePalette('check')).toEqual({ command: 'check' });
    // the list's footer is read from the same table
    expect(footerHints()).toBe(
      'j/k move · Enter open · n new · p check · r re-run · e env · m mark · c compare · b bisect · x delete · w report · : palette · ? help · q quit',
    );
    expect(parsePalette('check demo-faulty-box')).toEqual({ command: 'check', arg: 'demo-faulty-box' });
    expect(newBoxOffer('user@gpu1')).toBe(
      `new box user@gpu1: ${b.keys[0]} ${b.hint} before its first run (:${b.palette})`,
    );
  });

  it('no cell yet: the key opens the lane picker, whose Enter checks the box for the picked lane', () => {
    const { ui, effects } = press([key], []);
    expect(ui).toMatchObject({ mode: 'lanes', lanesFor: 'check' });
    expect(effects).toEqual([]);
    const picked = press([key, 'faulty', { return: true }], []);
    expect(picked.effects).toEqual([{ kind: 'check', lane: 'demo-faulty-box' }]);
    expect(picked.ui.mode).toBe('list');
    // the ordinary picker still starts a cell
    expect(press(['n', 'faulty', { return: true }], []).effects).toEqual([
      { kind: 'start', lane: 'demo-faulty-box' },
    ]);
  });

  it("on a cell: the cell's lane; :check NAME another lane; a check cell opens no dashboard", () => {
    const run = { id: 'c1', ...newCell('baseline', { state: 'done' }) } as Cell;
    expect(press([key], [run]).effects).toEqual([{ kind: 'check', lane: 'baseline' }]);
    expect(press([':', 'check fa2', { return: true }], [run]).effects).toEqual([
      { kind: 'check', lane: 'fa2' },
    ]);
    const check = checked().cells[0]!;
    expect(press([{ return: true }], [check]).effects).toEqual([
      { kind: 'notice', text: `c1 is a box check: its checks are below; ${keyOf('rerun')} checks again` },
    ]);
    expect(press(['m'], [check]).ui.marked).toEqual([]);
  });
});

describe('the controller runs the check in its task slot', () => {
  function controllerWith(checkBox: NotebookDeps['checkBox']) {
    const store = NotebookStore.open(join(dir, `ctl-${Math.random().toString(36).slice(2)}.json`), () => T0);
    const fail = () => {
      throw new Error('no run in this test');
    };
    const deps: NotebookDeps = {
      lanes: () => loadLanes(),
      openSession: fail,
      openFinished: fail,
      runToVerdict: fail,
      target: 'gpu1',
      demo: true,
      now: () => T1,
      ...(checkBox ? { checkBox } : {}),
      writeReport: (notebookFile) => writeReport({ notebookFile }).files[0] ?? '',
      bisectCells,
    };
    return { store, ctl: new NotebookController(store, deps) };
  }

  it('records a running cell at once, then its verdict; a new box until then; a cell asked for meanwhile is queued', async () => {
    let finish: (r: typeof foreign) => void = () => undefined;
    const { store, ctl } = controllerWith(() => new Promise((res) => (finish = res)));
    expect(ctl.getState().box).toEqual({ target: 'gpu1', seen: false });
    expect(ctl.check('demo-faulty-box')).toBe('c1');
    expect(store.get().cells[0]).toMatchObject({
      id: 'c1',
      kind: 'check',
      state: 'running',
      target: 'gpu1',
      demo: true,
    });
    expect(ctl.getState()).toMatchObject({ running: 'c1', box: { seen: true } });
    // the GPUs are being measured: a run waits, a second check is refused
    expect(ctl.start({ lane: 'baseline' })).toBeNull();
    expect(ctl.getState().queued.map((q) => q.lane)).toEqual(['baseline']);
    expect(ctl.getState().notice).toContain('the box check c1');
    expect(ctl.check('demo-faulty-box')).toBeNull();
    expect(ctl.getState().notice).toBe('the box check c1 is running: check the box when it has ended');
    ctl.unqueue('q1');
    finish(foreign);
    await new Promise((r) => setTimeout(r, 10));
    expect(store.get().cells[0]).toMatchObject({ state: 'done', verdict: 'NO-GO', ended: T1.toISOString() });
    expect(ctl.getState().running).toBeNull();
    expect(ctl.getState().notice).toMatch(/^c1 NO-GO: box check of gpu1: /);
    // r on a check cell checks again, linked to it
    const again = ctl.rerun('c1');
    expect(again).toBe('c2');
    finish(healthy);
    await new Promise((r) => setTimeout(r, 10));
    expect(store.get().cells[1]).toMatchObject({ parent: 'c1', link: 'rerun', verdict: 'GO', go: true });
    await ctl.close();
  });

  it('a check that throws leaves an error cell saying why; closing mid-check marks it stopped', async () => {
    const { store, ctl } = controllerWith(() => Promise.reject(new Error('ssh: cannot reach gpu1')));
    ctl.check('demo-faulty-box');
    await new Promise((r) => setTimeout(r, 10));
    expect(store.get().cells[0]).toMatchObject({
      state: 'failed',
      reasons: ['the check could not run: ssh: cannot reach gpu1'],
    });
    store.close();
    const hung = controllerWith(() => new Promise(() => undefined));
    hung.ctl.check('demo-faulty-box');
    await hung.ctl.close();
    expect(readNotebook(hung.store.file).cells[0]).toMatchObject({
      state: 'failed',
      reasons: ['stopped before its verdict: the notebook was closed'],
    });
  });
});
