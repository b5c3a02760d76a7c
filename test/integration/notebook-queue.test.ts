import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { notebookDeps } from '../../src/cli/notebook-deps.js';
import { localOpener } from '../../src/cli/open-session.js';
import { laneDirs, loadLanes } from '../../src/lanes/load.js';
import { NotebookController } from '../../src/notebook/controller.js';
import { NotebookStore, readNotebook } from '../../src/notebook/store.js';
import { waitUntil } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'nsa-nb-queue-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// quick demo lanes: 4 steps of 0.4 s, so a run lasts long enough to queue behind it
const ENV = `  NSA_HEARTBEAT_EVERY: "1"\n  NSA_DISABLE_AUX_STATS: "1"\n  NSA_PREFILL_BATCHED: "1"\n`;
mkdirSync(join(dir, '.nsa-dbg', 'presets'), { recursive: true });
writeFileSync(join(dir, '.nsa-dbg', 'presets', 'quick.yaml'), `name: quick\nenv:\n${ENV}steps: 4\n`);
writeFileSync(
  join(dir, '.nsa-dbg', 'presets', 'quick-fa2.yaml'),
  `name: quick-fa2\nenv:\n${ENV}  NSA_USE_FA2: "1"\nsteps: 4\n`,
);

function open(name: string) {
  const store = NotebookStore.open(join(dir, `${name}.json`));
  const controller = new NotebookController(
    store,
    notebookDeps(localOpener(), {
      demo: true,
      stepMs: 400,
      cwd: dir,
      lanes: () => loadLanes(laneDirs(dir)),
    }),
  );
  return { controller, file: join(dir, `${name}.json`) };
}

const allDone = (c: NotebookController) =>
  waitUntil(
    async () => {
      await c.idle();
      return c.getState().running === null && c.getState().queued.length === 0;
    },
    { timeoutMs: 90_000, what: 'the queue to run out' },
  );

describe('the notebook runs its cells in order, one at a time', () => {
  it('cells asked for while one runs are queued, run in order, and can be taken off', async () => {
    const { controller: c, file } = open('queue');
    expect(c.start({ lane: 'quick' })).toBe('c1');
    // the status line follows the run: step, loss, toks/s
    const live = await waitUntil(
      () => /^c1 quick · step [1-9]\/4 · loss \d\.\d{4} · [\d.]+ toks\/s/.exec(c.getState().live ?? ''),
      {
        timeoutMs: 30_000,
        what: 'the live status line',
      },
    );
    expect(live[0]).toMatch(/step/);
    // while c1 runs: an edit of c1 and two lanes are queued, nothing is refused or thrown away
    expect(c.runEdited('c1', { NSA_HEARTBEAT_EVERY: '0' })).toBeNull();
    expect(c.start({ lane: 'quick-fa2' })).toBeNull();
    expect(c.start({ lane: 'quick' })).toBeNull();
    expect(c.getState().queued).toEqual([
      { qid: 'q1', lane: 'quick', what: 'toggle of c1: NSA_HEARTBEAT_EVERY=0' },
      { qid: 'q2', lane: 'quick-fa2', what: '' },
      { qid: 'q3', lane: 'quick', what: '' },
    ]);
    expect(c.getState().notice).toContain('q3 quick queued: it runs when c1 has ended');
    c.unqueue('q2');
    expect(c.getState().queued.map((q) => q.qid)).toEqual(['q1', 'q3']);
    await allDone(c);
    await c.close();
    const cells = readNotebook(file).cells;
    expect(
      cells.map((x) => [x.id, x.lane.name, x.parent ?? null, x.env.NSA_HEARTBEAT_EVERY, x.verdict]),
    ).toEqual([
      ['c1', 'quick', null, '1', 'pass'],
      ['c2', 'quick', 'c1', '0', 'pass'],
      ['c3', 'quick', null, '1', 'pass'],
    ]);
    // one at a time: each started after the one before it had ended
    for (let i = 1; i < cells.length; i++)
      expect(Date.parse(cells[i]!.started!)).toBeGreaterThanOrEqual(Date.parse(cells[i - 1]!.ended!) - 1000);
  });

  it("a running cell's dashboard stays live when the run ends: exited, the verdict, the clock stopped", async () => {
    const { controller: c } = open('view');
    c.start({ lane: 'quick' });
    await waitUntil(() => c.getState().notebook.cells[0], { timeoutMs: 30_000, what: 'the cell' });
    const view = await c.openCell('c1');
    if (!view) throw new Error('no view');
    await allDone(c);
    // the notebook has the verdict; the dashboard it showed must say the same, not "running"
    expect(c.getState().notebook.cells[0]?.verdict).toBe('pass');
    const s = await waitUntil(
      () => {
        const st = view.getState();
        return st.runState === 'exited' && st.verdict?.verdict === 'pass' ? st : null;
      },
      { timeoutMs: 5_000, what: 'the dashboard to show the end' },
    );
    expect(s.endedAt).toBeGreaterThan(s.startedAt ?? 0);
    // the trainer is gone from the GPU panel once the poller saw it end, as in the plain dashboard
    await waitUntil(() => view.getState().gpu.processes.every((p) => p.pid !== s.pid), {
      timeoutMs: 5_000,
      what: 'the dead pid to leave the GPU panel',
    });
    expect(view.quitAsks?.()).toBe(false);
    await view.quit();

    // opened again, finished: a re-attach to its folder, whose clock is the run's own (not "0s")
    const again = await c.openCell('c1');
    if (!again) throw new Error('no view');
    const fin = await waitUntil(
      () => {
        const st = again.getState();
        return st.runState === 'exited' && st.endedAt && st.verdict ? st : null;
      },
      { timeoutMs: 10_000, what: 'the finished cell replayed' },
    );
    const cell = c.getState().notebook.cells[0]!;
    const ran = Date.parse(cell.ended!) - Date.parse(cell.started!);
    await waitUntil(() => Math.abs((again.getState().endedAt ?? 0) - (fin.startedAt ?? 0) - ran) < 2000, {
      timeoutMs: 5_000,
      what: `a duration near the run's ${ran} ms, not the ${(fin.endedAt ?? 0) - (fin.startedAt ?? 0)} ms of the replay`,
    });
    expect(ran).toBeGreaterThan(2000);
    await again.quit();
    await c.close();
  });
});
