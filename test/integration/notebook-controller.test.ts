import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { notebookDeps } from '../../src/cli/notebook-deps.js';
import { localOpener } from '../../src/cli/open-session.js';
import { laneDirs, loadLanes } from '../../src/lanes/load.js';
import { NotebookController } from '../../src/notebook/controller.js';
import { recoverCells } from '../../src/notebook/recover.js';
import { NotebookStore, readNotebook } from '../../src/notebook/store.js';
import { analyzeDir } from '../../src/runs/analyze-dir.js';
import { waitUntil } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'nsa-nb-ctl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENV = `  NSA_HEARTBEAT_EVERY: "1"\n  NSA_DISABLE_AUX_STATS: "1"\n  NSA_PREFILL_BATCHED: "1"\n`;
mkdirSync(join(dir, '.nsa-dbg', 'presets'), { recursive: true });
writeFileSync(
  join(dir, '.nsa-dbg', 'presets', 'ladder.yaml'),
  `name: ladder\nenv:\n${ENV}phases:\n  - steps: 1\n  - steps: 3\n`,
);
writeFileSync(
  join(dir, '.nsa-dbg', 'presets', 'ladder-fa2.yaml'),
  `name: ladder-fa2\nenv:\n${ENV}  NSA_USE_FA2: "1"\nphases:\n  - steps: 1\n  - steps: 3\n`,
);

/** real sessions on the demo trainer, run to a verdict as `run --headless` does */
function open(name: string) {
  const store = NotebookStore.open(join(dir, `${name}.json`));
  return new NotebookController(
    store,
    notebookDeps(localOpener(), { demo: true, cwd: dir, lanes: () => loadLanes(laneDirs(dir)) }),
  );
}

/** resolves when no cell runs any more (a ladder starts its next phase before the last ends) */
async function settled(c: NotebookController) {
  await waitUntil(
    async () => {
      await c.idle();
      return c.getState().running === null;
    },
    { timeoutMs: 60_000, what: 'all cells done' },
  );
}

describe('notebook controller with real runs', () => {
  it('smoke ladder: the next phase starts as its own linked cell after the previous passed', async () => {
    const c = open('ladder');
    expect(c.start({ lane: 'ladder' })).toBe('c1');
    await settled(c);
    await c.close();
    const cells = readNotebook(join(dir, 'ladder.json')).cells;
    expect(
      cells.map((x) => [x.id, x.phase, x.parent ?? null, x.link ?? null, x.summary?.stepsReached, x.go]),
    ).toEqual([
      ['c1', 0, null, null, 1, true],
      ['c2', 1, 'c1', 'phase', 3, true],
    ]);
  });

  it('a failed phase stops the ladder; a toggle and a re-run make linked cells', async () => {
    const c = open('ladder-fa2');
    c.start({ lane: 'ladder-fa2' });
    await settled(c);
    expect(c.getState().notebook.cells.map((x) => [x.id, x.verdict])).toEqual([['c1', 'crash']]);
    expect(c.getState().notice).toContain('the ladder stops here');
    // the env editor's flip of NSA_USE_FA2=1
    c.runEdited('c1', { NSA_USE_FA2: '0' });
    await settled(c);
    c.rerun('c1');
    await settled(c);
    await c.close();
    const cells = readNotebook(join(dir, 'ladder-fa2.json')).cells;
    expect(cells.map((x) => [x.id, x.parent ?? null, x.link ?? null, x.env.NSA_USE_FA2, x.verdict])).toEqual([
      ['c1', null, null, '1', 'crash'],
      ['c2', 'c1', 'toggle', '0', 'pass'],
      // the toggled first phase passed, so the ladder went on from it
      ['c3', 'c2', 'phase', '0', 'pass'],
      ['c4', 'c1', 'rerun', '1', 'crash'],
    ]);
  });

  it('a cell left running by a gone nsa-dbg gets its verdict from the evidence once its run ended', async () => {
    const c = open('recover');
    c.start({ lane: 'ladder-fa2' });
    await settled(c);
    await c.close();
    // as if the process had died before writing the verdict
    const file = join(dir, 'recover.json');
    const nb = JSON.parse(readFileSync(file, 'utf8'));
    Object.assign(nb.cells[0], { state: 'running', verdict: undefined, go: undefined, summary: undefined });
    writeFileSync(file, JSON.stringify(nb));
    const store = NotebookStore.open(file);
    expect(await recoverCells(store)).toEqual(['c1']);
    store.close();
    expect(
      readNotebook(file).cells.map((x) => [x.state, x.verdict, x.go, x.summary?.crash?.exception]),
    ).toEqual([['done', 'crash', false, 'RuntimeError']]);
  });

  it('a cell whose trainer died with its nsa-dbg (no exit_code) is finished from its evidence, marked interrupted', async () => {
    const c = open('interrupted');
    c.start({ lane: 'ladder-fa2' });
    await settled(c);
    await c.close();
    const file = join(dir, 'interrupted.json');
    const nb = JSON.parse(readFileSync(file, 'utf8'));
    const runDir = join(dir, nb.cells[0].evidenceDir);
    // as kill -9 of nsa-dbg leaves it: the cell running, the trainer gone before its status was written
    rmSync(join(runDir, 'exit_code'));
    writeFileSync(join(runDir, 'pid'), `${spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim()}\n`);
    const running = {
      state: 'running',
      verdict: undefined,
      go: undefined,
      summary: undefined,
      reasons: undefined,
    };
    Object.assign(nb.cells[0], running);
    // and a second cell whose trainer still runs (this process stands in for it): left alone
    nb.cells.push({ ...nb.cells[0], id: 'c9', evidenceDir: 'alive-run' });
    mkdirSync(join(dir, 'alive-run'));
    writeFileSync(join(dir, 'alive-run', 'pid'), `${process.pid}\n`);
    writeFileSync(file, JSON.stringify(nb));
    const store = NotebookStore.open(file);
    expect(await recoverCells(store)).toEqual(['c1']);
    store.close();
    const [c1, c9] = readNotebook(file).cells;
    expect(c9!.state).toBe('running');
    expect(c1!.state).toBe('done');
    expect(c1!.interrupted).toBe(true);
    // the verdict `analyze` gives the folder
    const analyzed = await analyzeDir(runDir);
    expect(c1!.verdict).toBe(analyzed.verdict);
    expect(c1!.go).toBe(false);
    expect(c1!.reasons![0]).toMatch(/^interrupted: nsa-dbg ended while it ran/);
    expect(c1!.summary!.line).toMatch(/\(interrupted\)$/);
  });
});
