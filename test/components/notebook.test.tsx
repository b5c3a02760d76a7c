import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NotebookApp } from '../../panels/notebook/NotebookApp.js';
import { NotebookScreen } from '../../panels/notebook/NotebookScreen.js';
import { bisectCells } from '../../src/bisect/cells.js';
import { loadLanes } from '../../src/lanes/load.js';
import { fileHash } from '../../src/notebook/cell-build.js';
import { NotebookController } from '../../src/notebook/controller.js';
import { knownFlags } from '../../src/notebook/flags.js';
import { NotebookStore, readNotebook } from '../../src/notebook/store.js';
import { initialNotebookUi } from '../../src/notebook/view-reducer.js';
import { writeReport } from '../../src/report/write.js';
import { frameLines, KEYS, renderAt, settle, waitFor } from '../helpers/render.js';

const FIX = join(import.meta.dirname, '..', 'fixtures', 'report', 'notebook.json');
const LANES = join(import.meta.dirname, '..', '..', 'presets');

/**
 * A real controller on a real notebook file (the report fixture, made by real demo runs), each
 * cell's lane pointing at its own copy of the lane file, so the stale mark can be tested by
 * editing one. No run is started here: the tmux test drives real runs.
 */
function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'nsa-nb-view-'));
  const file = join(dir, 'ab.json');
  const nb = JSON.parse(readFileSync(FIX, 'utf8'));
  for (const c of nb.cells) {
    const lane = join(dir, `${c.lane.name}.yaml`);
    copyFileSync(join(LANES, `${c.lane.name}.yaml`), lane);
    c.lane.source = lane;
    c.lane.sourceHash = fileHash(lane);
  }
  writeFileSync(file, JSON.stringify(nb));
  writeFileSync(join(dir, 'fa2.yaml'), `${readFileSync(join(dir, 'fa2.yaml'), 'utf8')}# edited\n`);
  const store = NotebookStore.open(file);
  const controller = new NotebookController(store, {
    lanes: () => loadLanes(),
    target: 'local',
    openSession: () => {
      throw new Error('no runs in the view test');
    },
    openFinished: () => {
      throw new Error('no runs in the view test');
    },
    runToVerdict: () => Promise.reject(new Error('no runs in the view test')),
    writeReport: (notebookFile) => writeReport({ notebookFile }).files[0] ?? '',
    bisectCells,
  });
  const onExit = vi.fn();
  const r = renderAt(<NotebookApp controller={controller} onExit={onExit} color={false} />, 120, 40);
  const frame = () => r.lines().join('\n');
  const until = (text: string | RegExp) =>
    waitFor(
      () => (typeof text === 'string' ? frame().includes(text) : text.test(frame())),
      () => `${text} in:\n${frame()}`,
    );
  const gone = (text: string) =>
    waitFor(
      () => !frame().includes(text),
      () => `${text} still in:\n${frame()}`,
    );
  const press = async (keys: string, expect?: string | RegExp) => {
    for (const k of keys) r.stdin.write(k);
    if (expect) await until(expect);
  };
  cleanup = () => {
    r.unmount();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { ...r, dir, file, frame, until, gone, press, onExit };
}

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

describe('notebook view', () => {
  it('lists cells with verdict badges, marks the one whose lane changed as stale', async () => {
    const t = setup();
    await t.until('12 cells');
    const rows = t.lines();
    expect(rows.find((l) => l.includes('c1 '))).toMatch(/c1\s+NO-GO baseline\s+hang at step 6/);
    expect(rows.find((l) => l.includes('c2 '))).toMatch(/c2\s+GO\s+batched-prefill\s+pass: 8 steps/);
    expect(rows.find((l) => l.includes('c3 '))).toMatch(/NO-GO fp16\s+nan at step 2/);
    expect(rows.find((l) => l.includes('c4 '))).toMatch(/NO-GO fa2\s+\[stale\] crash at step 1/);
    expect(rows.filter((l) => l.includes('[stale'))).toHaveLength(1);
  });

  it('the detail line of a slow GO says GO (slow: …), a stopped cell says it was stopped', async () => {
    const t = setup();
    await t.until('12 cells');
    await t.press('jjjj', 'c5 demo-slow-prefill · local');
    expect(t.frame()).toMatch(/^GO, slow: 3 steps, 1 silence\(s\) checked and found busy/m);
    expect(t.frame()).not.toContain('NO-GO: slow');
    const rows = t.lines();
    expect(rows.find((l) => l.includes('c12 '))).toMatch(/c12\s+STOP\s+batched-prefill/);
    await t.press('jjjjjjj', 'c12 batched-prefill · local');
    expect(t.frame()).toMatch(/^STOPPED before its verdict: reached step \d+ of 200/m);
  });

  it('j/k select; the detail follows the selection', async () => {
    const t = setup();
    await t.until('12 cells');
    await t.press('j', 'c2 batched-prefill · local');
    await t.press('jj', 'c4 fa2 · local');
    await t.press('k', 'c3 fp16 · local');
  });

  it('x asks, Enter keeps the cell (No is the default), y deletes it from the file', async () => {
    const t = setup();
    await t.until('12 cells');
    await t.press('jx', 'delete c2 batched-prefill? y/N');
    t.stdin.write('\r');
    await waitFor(() => !t.frame().includes('delete c2'));
    expect(t.frame()).toContain('12 cells');
    await t.press('x', 'delete c2');
    await t.press('y', '11 cells');
    expect(readNotebook(t.file).cells.map((c) => c.id)).toEqual([
      'c1',
      ...['c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'c10', 'c11', 'c12'],
    ]);
  });

  it('compare shows the env diff, both curves and the summary of two marked cells', async () => {
    const t = setup();
    await t.until('12 cells');
    await t.press('mjm');
    await t.press('c', 'compare c1 baseline vs c2 batched-prefill');
    const f = t.frame();
    expect(f).toMatch(/NSA_PREFILL_BATCHED\s+\(unset\)\s+1/);
    expect(f).toMatch(/loss ━ c1 ━ c2/);
    expect(f).toMatch(/GO\/NO-GO\s+NO-GO\s+GO/);
    expect(f).toMatch(/hang \/ NaN \/ crash\s+hang step 6 \(in-step\)/);
    await t.press(KEYS.escape);
    await t.gone('compare c1');
  });

  it('env editor: space flips the highlighted flag and says what changed', async () => {
    const t = setup();
    await t.until('12 cells');
    await t.press('e', 'env of c1 baseline');
    await t.press(' ', 'changes vs c1: NSA_DISABLE_AUX_STATS 1 → 0');
    await t.press('f', 'known flags');
    await t.press('prefill', 'NSA_PREFILL_BATCHED');
    expect(t.frame()).toContain('vectorized prefill');
    await t.press('\r', 'changes vs c1: NSA_DISABLE_AUX_STATS 1 → 0 · NSA_PREFILL_BATCHED unset → 1');
    await t.press(KEYS.escape);
    await t.gone('env of c1');
    expect(readNotebook(t.file).cells).toHaveLength(12);
  });

  it('env editor: a flag with other values offers them (NSA_FORCE_BRANCH: cmp|sel|win), = types any value', async () => {
    const t = setup();
    await t.until('12 cells');
    await t.press('e', 'env of c1 baseline');
    await t.press('f', 'known flags');
    await t.press('FORCE_BRANCH', 'NSA_FORCE_BRANCH');
    // picked, it is not set to 1: its values are offered
    await t.press('\r', 'NSA_FORCE_BRANCH = _');
    expect(t.frame()).toMatch(/cmp\s+set by branch-cmp/);
    expect(t.frame()).toMatch(/sel\s+set by branch-sel/);
    expect(t.frame()).toMatch(/win\s+set by branch-win/);
    await t.press(KEYS.down);
    await settle();
    await t.press('\r', 'changes vs c1: NSA_FORCE_BRANCH unset → sel');
    // the highlighted variable (the first, NSA_DISABLE_AUX_STATS) gets a typed value
    await t.press('=', 'NSA_DISABLE_AUX_STATS = _');
    expect(t.frame()).toContain('now: 1');
    await t.press('7', 'NSA_DISABLE_AUX_STATS = 7_');
    expect(t.frame()).toMatch(/7\s+as typed/);
    await t.press('\r', 'changes vs c1: NSA_FORCE_BRANCH unset → sel · NSA_DISABLE_AUX_STATS 1 → 7');
    // a name no lane or table knows is offered as a new variable
    await t.press('f', 'known flags');
    await t.press('MY_KNOB', 'a new variable: type its value next');
    await t.press('\r', 'MY_KNOB = _');
    await t.press('on\r', 'MY_KNOB unset → on');
  });

  it('? lists keys and : commands from the one table; :report writes the report and says where', async () => {
    const t = setup();
    await t.until('12 cells');
    await t.press('?', 'keys and : commands');
    expect(t.frame()).toMatch(/n \/ :lane NAME\s+new cell from a lane/);
    expect(t.frame()).toMatch(/w \/ :report\s+write the report/);
    await t.press(KEYS.escape);
    await t.gone('keys and : commands');
    await t.press(':rep', ':rep_');
    await t.press('\r', 'report written:');
    expect(existsSync(join(t.dir, 'ab.report.md'))).toBe(true);
    expect(existsSync(join(t.dir, 'ab.report.svg'))).toBe(true);
    await t.press(':bogus\r', 'unknown command :bogus');
  });

  it('q with nothing running leaves at once', async () => {
    const t = setup();
    await t.until('12 cells');
    t.stdin.write('q');
    await waitFor(() => t.onExit.mock.calls.length === 1);
    await settle();
  });
});

describe('notebook screen while a cell runs', () => {
  const nb = readNotebook(FIX);
  const lanes = [...loadLanes().values()];
  const state = {
    file: 'ab.json',
    notebook: {
      ...nb,
      cells: [...nb.cells.slice(0, 4), { ...nb.cells[1]!, id: 'c13', state: 'running' as const }],
    },
    stale: [],
    running: 'c13',
    box: { target: 'local', seen: true },
    live: 'c13 batched-prefill · step 4/8 · loss 5.6825 · 84.0 toks/s · SUSPECT: silent 3 s at step 5 (in-step), rank 0; checking',
    queued: [
      { qid: 'q1', lane: 'fa2', what: 'toggle of c4: NSA_USE_FA2=0' },
      { qid: 'q2', lane: 'baseline', what: '' },
    ],
    notice: 'q2 baseline queued: it runs when c13 has ended (x takes it off the queue)',
  };
  const screen = (ui = initialNotebookUi) =>
    frameLines(
      render(
        <NotebookScreen
          state={state}
          ui={ui}
          lanes={lanes}
          flags={knownFlags(lanes)}
          columns={160}
          rows={30}
          color={false}
          notice={state.notice}
        />,
      ).lastFrame(),
    );

  it('shows the live status line and the queued cells after the cells, next one first', () => {
    const lines = screen();
    expect(lines).toContain(
      '▶ c13 batched-prefill · step 4/8 · loss 5.6825 · 84.0 toks/s · SUSPECT: silent 3 s at step 5 (in-step), rank 0; checking · 2 queued',
    );
    const q1 = lines.findIndex((l) => /q1\s+QUEUED fa2\s+next ← toggle of c4: NSA_USE_FA2=0/.test(l));
    const q2 = lines.findIndex((l) => /q2\s+QUEUED baseline\s+waiting/.test(l));
    const c13 = lines.findIndex((l) => /c13\s+RUN/.test(l));
    expect([c13 >= 0, q1 > c13, q2 > q1]).toEqual([true, true, true]);
  });

  it('a selected queued cell: its detail, and x asks to take it off the queue', () => {
    const detail = screen({ ...initialNotebookUi, selected: 5 });
    expect(detail.join('\n')).toContain(
      'q1 fa2 · queued · toggle of c4: NSA_USE_FA2=0 · runs when the cells before it',
    );
    const confirm = screen({ ...initialNotebookUi, selected: 6, mode: 'confirmDelete' });
    expect(confirm.join('\n')).toContain('take q2 baseline off the queue? y/N');
    const quit = screen({ ...initialNotebookUi, mode: 'quit' });
    expect(quit.join('\n')).toContain('stop c13 (its verdict is kept) and drop 2 queued cells and quit? y/N');
  });
});
