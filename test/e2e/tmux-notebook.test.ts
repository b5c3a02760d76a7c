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
  it('two lanes → toggle a flag → compare → report → q', { timeout: 120_000 }, async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'nsa-e2e-nb-'));
    tmux = new TmuxSession('notebook', 120, 40);
    // no subcommand: the notebook of the current folder; --demo runs the bundled trainer
    tmux.start(`cd ${dir} && node ${BIN} --notebook ab.json --demo --steps 6`, {
      NSA_DBG_HOME: join(dir, 'home'),
    });
    const t = tmux;
    await t.waitFor((s) => s.includes('nsa-dbg notebook') && s.includes('no cells yet'), 'empty notebook');

    // lane 1: batched-prefill passes
    t.key('n');
    await t.waitFor((s) => s.includes('new cell from lane'), 'lane picker');
    t.type('batched');
    await t.waitFor((s) => /filter: batched_/.test(s), 'filtered picker');
    t.key('Enter');
    await t.waitFor((s) => /c1\s+GO\s+batched-prefill\s+pass: 6 steps/.test(s), 'c1 passes', 40_000);

    // lane 2: fa2 crashes, from the palette
    t.type(':lane fa2');
    await t.waitFor((s) => s.includes(':lane fa2_'), 'palette');
    t.key('Enter');
    await t.waitFor((s) => /c2\s+NO-GO fa2\s+crash at step 1/.test(s), 'c2 crashes', 40_000);

    // toggle: NSA_USE_FA2 1→0 in c2's env editor, picked from the known flags, run as c3
    t.key('e');
    await t.waitFor((s) => s.includes('env of c2 fa2'), 'env editor');
    t.key('f');
    await t.waitFor((s) => s.includes('known flags'), 'flag picker');
    t.type('USE_FA2');
    await t.waitFor((s) => /filter: USE_FA2_/.test(s), 'filtered flags');
    t.key('Enter');
    await t.waitFor((s) => s.includes('diff to c2: NSA_USE_FA2=0'), 'the flip, shown as a diff');
    t.key('Enter');
    const toggled = await t.waitFor((s) => /c3\s+GO\s+fa2/.test(s), 'c3 passes', 40_000);
    expect(toggled).toMatch(/c3 .*← toggle of c2: NSA_USE_FA2=0/);

    // compare c2 and c3
    t.key('k');
    t.key('m');
    t.key('j');
    t.key('m');
    t.key('c');
    const cmp = await t.waitFor((s) => s.includes('compare c2 fa2 vs c3 fa2'), 'compare view');
    expect(cmp).toMatch(/NSA_USE_FA2\s+1\s+0/);
    expect(cmp).toMatch(/GO\/NO-GO\s+NO-GO\s+GO/);
    expect(cmp).toMatch(/loss ━ c2 ━ c3/);
    t.key('Escape');
    await t.waitFor((s) => !s.includes('compare c2'), 'back to the list');

    // open a finished cell's dashboard and come back
    t.key('Enter');
    await t.waitFor((s) => /lane fa2/.test(s) && /step \d+\/6/.test(s), "c3's dashboard", 15_000);
    t.key('q');
    await t.waitFor((s) => s.includes('back to the notebook'), 'the dashboard says q goes back');
    t.key('y');
    await t.waitFor((s) => s.includes('nsa-dbg notebook'), 'the notebook again');

    // export the report
    t.key('w');
    await t.waitFor((s) => s.includes('report written:'), 'report written');
    const md = readFileSync(join(dir, 'ab.report.md'), 'utf8');
    expect(md).toMatch(/^## GO\/NO-GO Decision: CONDITIONAL GO ⚠️$/m);
    expect(md).toMatch(/^\| c3 fa2 \(NSA_USE_FA2=0 vs c2\) \| 6 \/ 6 \| none \|/m);
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
