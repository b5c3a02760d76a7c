import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readNotebook } from '../../src/notebook/store.js';
import { TmuxSession } from '../helpers/tmux.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
let tmux: TmuxSession | null = null;
let dir = '';
afterEach(() => {
  tmux?.kill();
  tmux = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the notebook in real tmux', () => {
  it('live status line → a queued cell (one taken off) → q back from a running and a finished cell → a typed env value → t and back → compare → report → q', {
    timeout: 180_000,
  }, async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'nsa-e2e-nb-'));
    tmux = new TmuxSession('notebook', 120, 40);
    // no subcommand: the notebook of the current folder; --demo runs the bundled trainer, slow
    // enough (30 steps of 0.4 s) for the keys below to land while a cell runs
    tmux.start(`cd ${dir} && node ${BIN} --notebook ab.json --demo --steps 30 --step-ms 400`, {
      NSA_DBG_HOME: join(dir, 'home'),
    });
    const t = tmux;
    await t.waitFor((s) => s.includes('nsa-dbg notebook') && s.includes('no cells yet'), 'empty notebook');

    // c1 batched-prefill: while it runs the status line follows it live
    t.key('n');
    await t.waitFor((s) => s.includes('new cell from lane'), 'lane picker');
    t.type('batched');
    await t.waitFor((s) => /filter: batched_/.test(s), 'filtered picker');
    t.key('Enter');
    await t.waitFor(
      (s) => /▶ c1 batched-prefill · step [1-9]\d*\/30 · loss \d\.\d{4} · [\d.]+ toks\/s/.test(s),
      'the live status line: step, loss, toks/s',
      30_000,
    );

    // while c1 runs, new cells are queued, not refused: fa2 from the palette, baseline from n
    t.type(':lane fa2');
    await t.waitFor((s) => s.includes(':lane fa2_'), 'palette');
    t.key('Enter');
    await t.waitFor((s) => /q1\s+QUEUED fa2\s+next/.test(s), 'q1 queued');
    t.key('n');
    await t.waitFor((s) => s.includes('new cell from lane'), 'lane picker');
    t.type('baseline');
    await t.waitFor((s) => /filter: baseline_/.test(s), 'filtered picker');
    t.key('Enter');
    await t.waitFor((s) => /q2\s+QUEUED baseline\s+waiting/.test(s) && s.includes('· 2 queued'), 'q2 queued');
    // q2 is taken off the queue: x on its row, y
    t.key('j');
    t.key('j');
    await t.waitFor((s) => s.includes('q2 baseline · queued'), 'q2 selected');
    t.key('x');
    await t.waitFor((s) => s.includes('take q2 baseline off the queue? y/N'), 'the confirm');
    t.key('y');
    await t.waitFor(
      (s) => s.includes('q2 baseline taken off the queue') && !/q2\s+QUEUED/.test(s),
      'q2 gone',
    );

    // c1's dashboard while it runs; q comes straight back (nothing asked), the run goes on
    t.key('k');
    t.key('k');
    await t.waitFor((s) => /c1 batched-prefill · local/.test(s), 'c1 selected');
    t.key('Enter');
    await t.waitFor(
      (s) => /lane batched-prefill · running/.test(s) && s.includes('q back'),
      "c1's live dashboard",
    );
    t.key('q');
    const back = await t.waitFor((s) => s.includes('nsa-dbg notebook'), 'the notebook again, at once', 5_000);
    expect(back).not.toContain('Quit nsa-dbg?');
    expect(back).toMatch(/c1\s+RUN\s+batched-prefill/);

    // c1 passes; the queued fa2 runs after it, as c2, and crashes
    await t.waitFor((s) => /c1\s+GO\s+batched-prefill\s+pass: 30 steps/.test(s), 'c1 passes', 60_000);
    await t.waitFor((s) => /c2\s+NO-GO fa2\s+crash at step 1/.test(s), 'c2 (was q1) crashes', 40_000);

    // c2's env editor: a typed value for NSA_USE_FA2, said as old → new, run as c3
    t.key('e');
    await t.waitFor((s) => s.includes('env of c2 fa2'), 'env editor');
    for (let i = 0; i < 5; i++) t.key('j'); // NSA_DISABLE_AUX_STATS ... NSA_TB_DISABLE, NSA_USE_FA2
    t.key('=');
    await t.waitFor((s) => s.includes('NSA_USE_FA2 = _') && s.includes('now: 1'), 'the value entry');
    t.type('0');
    await t.waitFor((s) => s.includes('NSA_USE_FA2 = 0_'), 'the typed value');
    t.key('Enter');
    await t.waitFor((s) => s.includes('changes vs c2: NSA_USE_FA2 1 → 0'), 'the change, old → new');
    t.key('Enter');
    await t.waitFor((s) => /c3\s+RUN\s+fa2/.test(s), 'c3 runs');

    // c3's dashboard stays live through the end of its run: exited, the verdict, q back
    t.key('Enter');
    await t.waitFor((s) => /lane fa2 · running/.test(s), "c3's live dashboard", 15_000);
    // t: the run's own terminal, as from the plain dashboard; Ctrl-] comes back to this cell
    t.key('t');
    await t.waitFor((s) => s.includes("nsa-dbg: the run's terminal. Ctrl-] returns"), "the run's terminal");
    t.key('C-]');
    await t.waitFor(
      (s) => /lane fa2 · (running|exited)/.test(s) && s.includes('back from the run’s terminal'),
      "back in c3's dashboard",
    );
    const ended = await t.waitFor(
      (s) => /lane fa2 · exited 0 · \d+s · step 30\/30/.test(s) && s.includes('PASS'),
      'the dashboard shows the run end, as the plain dashboard does',
      60_000,
    );
    expect(ended).toContain('q back');
    // the poller goes on as in the plain dashboard: the dead trainer leaves the GPU panel
    await t.waitFor((s) => s.includes('exited 0') && !/pid \d+ python3/.test(s), 'the dead pid gone', 10_000);
    t.key('q');
    await t.waitFor((s) => /c3\s+GO\s+fa2/.test(s), 'back, c3 passed');

    // a finished cell's dashboard: its own duration, keys that cannot act say why, q back
    for (let i = 0; i < 2; i++) t.key('k');
    await t.waitFor((s) => /c1 batched-prefill · local/.test(s), 'c1 selected');
    t.key('Enter');
    const fin = await t.waitFor(
      (s) => /lane batched-prefill · exited 0 · \d+s/.test(s),
      "c1's finished dashboard",
    );
    const secs = Number(/exited 0 · (\d+)s/.exec(fin)?.[1]);
    expect(secs).toBeGreaterThanOrEqual(8); // 30 steps of 0.4 s, not the "0s" of the replay
    expect(fin).toMatch(/d dump {2}s hot frames {2}l lane {2}t terminal {2}G follow {2}\? help {2}q back/);
    t.key('d');
    await t.waitFor((s) => s.includes('the run has ended: no process left to dump'), 'd says why');
    t.key('l');
    await t.waitFor((s) => s.includes('a cell keeps its lane'), 'l says why');
    t.key('q');
    const list = await t.waitFor((s) => s.includes('nsa-dbg notebook'), 'the notebook again', 5_000);
    expect(list).not.toContain('Quit nsa-dbg?');

    // compare c2 and c3
    t.key('j');
    t.key('m');
    t.key('j');
    t.key('m');
    t.key('c');
    // the whole view, not its first rows: the frame writer sends a frame in pieces, and a capture
    // may fall between them
    const cmp = await t.waitFor(
      (s) => s.includes('compare c2 fa2 vs c3 fa2') && /GO\/NO-GO/.test(s),
      'compare view, drawn down to its verdict row',
    );
    expect(cmp).toMatch(/NSA_USE_FA2\s+1\s+0/);
    expect(cmp).toMatch(/GO\/NO-GO\s+NO-GO\s+GO/);
    t.key('Escape');
    await t.waitFor((s) => !s.includes('compare c2'), 'back to the list');

    // export the report
    t.key('w');
    await t.waitFor((s) => s.includes('report written:'), 'report written');
    const md = readFileSync(join(dir, 'ab.report.md'), 'utf8');
    expect(md).toMatch(/^## GO\/NO-GO Decision: CONDITIONAL GO ⚠️$/m);
    expect(md).toMatch(/^\| c3 fa2 \(NSA_USE_FA2=0 vs c2\) \| 30 \/ 30 \| none \|/m);
    expect(existsSync(join(dir, 'ab.report.svg'))).toBe(true);

    t.key('q');
    await t.waitFor((s) => s.includes('[app exited 0]'), 'clean exit', 15_000);
    expect(existsSync(join(dir, 'ab.json.lock'))).toBe(false);
    const nb = readNotebook(join(dir, 'ab.json'));
    expect(nb.cells.map((c) => [c.id, c.lane.name, c.go, c.parent ?? null])).toEqual([
      ['c1', 'batched-prefill', true, null],
      ['c2', 'fa2', false, null],
      ['c3', 'fa2', true, 'c2'],
    ]);
  });

  it('no subcommand opens the notebook of the current folder; a second nsa-dbg on it is refused', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nsa-e2e-nb-'));
    tmux = new TmuxSession('notebook-default', 100, 30);
    tmux.start(`cd ${dir} && node ${BIN}`, { NSA_DBG_HOME: join(dir, 'home') });
    await tmux.waitFor(
      (s) => s.includes('/nsa-notebook.json') && s.includes('no cells yet'),
      'the folder’s notebook',
    );
    expect(existsSync(join(dir, 'nsa-notebook.json'))).toBe(true);
    const second = spawnSync(process.execPath, [BIN, 'report'], { cwd: dir, encoding: 'utf8' });
    // reading is allowed while it is open (writes are atomic); running into it is not
    expect(second.status).toBe(0);
    const run = spawnSync(
      process.execPath,
      [BIN, 'run', '--headless', '--demo', '--notebook', 'nsa-notebook.json', '--lane', 'fp16'],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, NSA_DBG_HOME: join(dir, 'home') },
      },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/nsa-notebook\.json is in use by pid \d+/);
    tmux.key('q');
    await tmux.waitFor((s) => s.includes('[app exited 0]'), 'clean exit', 15_000);
    expect(existsSync(join(dir, 'nsa-notebook.json.lock'))).toBe(false);
  });
});
