/**
 * The box check as a notebook cell, in real tmux with `--demo`: a notebook that has not seen this
 * box offers the check (the line comes from the key table); the key runs `nsa-dbg check --demo`'s
 * faulty box for the picked lane (demo-faulty-box: the demo's nvidia-smi stand-in simulates each
 * fault) and records a check cell with each check's measured value, expected value and source; the
 * cell survives closing and reopening the notebook, re-runs as a linked cell, and `nsa-dbg report`
 * shows the box's newest check in its platform section.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keyOf, newBoxOffer } from '../../src/notebook/keymap.js';
import { readNotebook } from '../../src/notebook/store.js';
import { BIN, runCli } from '../helpers/cli.js';
import { TmuxSession } from '../helpers/tmux.js';

let tmux: TmuxSession | null = null;
let dir = '';
afterEach(() => {
  tmux?.kill();
  tmux = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the box check as a notebook cell, in real tmux', () => {
  it('offered on a new box → picked lane checked → NO-GO cell with its checks → reopened → re-checked → in the report', {
    timeout: 180_000,
  }, async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'nsa-e2e-nbcheck-'));
    const env = { NSA_DBG_HOME: join(dir, 'home') };
    const open = () => {
      tmux?.kill();
      tmux = new TmuxSession('nbcheck', 160, 40);
      tmux.start(`cd ${dir} && node ${BIN} --notebook nb.json --demo`, env);
      return tmux;
    };
    let t = open();
    // the offer, worded from the key table
    const offer = newBoxOffer('local');
    await t.waitFor((s) => s.includes('nsa-dbg notebook') && s.includes(offer), 'the new-box offer');

    // no cell yet: the key picks a lane to check the box for
    t.key(keyOf('check'));
    await t.waitFor((s) => s.includes('check local for lane'), 'the lane picker, for a check');
    t.type('faulty');
    await t.waitFor((s) => s.includes('filter: faulty_'), 'filtered picker');
    t.key('Enter');
    // the box is seen now: no offer; the selected check cell lists its fail lines (one predicate:
    // a capture can catch the screen between the row's redraw and the detail's)
    await t.waitFor(
      (s) =>
        /c1\s+NO-GO\s+demo-faulty-box\s+box check of local: \d+ failed/.test(s) &&
        /FAIL GPU 0 clock event reasons: .*\(expected /.test(s) &&
        !s.includes(offer),
      'c1 the box check, NO-GO, its fail lines below, the offer gone',
      90_000,
    );

    // Enter opens no dashboard for a check cell
    t.key('Enter');
    await t.waitFor((s) => s.includes('c1 is a box check'), 'Enter says what a check cell is');

    t.key('q');
    await t.waitFor((s) => s.includes('[app exited'), 'exit', 30_000);

    // the file keeps each check with its measured value, expected value and source
    const nb = readNotebook(join(dir, 'nb.json'));
    expect(nb.cells).toHaveLength(1);
    const c1 = nb.cells[0]!;
    expect(c1).toMatchObject({ id: 'c1', kind: 'check', state: 'done', go: false, verdict: 'NO-GO' });
    expect(c1.lane.name).toBe('demo-faulty-box');
    const checks = c1.check!.boxes[0]!.checks;
    const byId = (id: string) => checks.find((k) => k.id === id);
    expect(byId('gpu.clocks')).toMatchObject({ status: 'fail', source: expect.any(String) });
    expect(byId('gpus.visible')?.status).toBe('fail');
    expect(byId('env.collectives')?.status).toBe('warn');
    expect(byId('env.collectives')?.measured).toContain('NCCL_P2P_DISABLE');
    for (const k of checks) expect(k.expected).not.toBe('');
    expect(c1.reasons?.some((r) => r.startsWith('fail: '))).toBe(true);

    // reopened: the check cell is read back as it was, no offer; r re-checks it as a linked cell
    t = open();
    await t.waitFor((s) => /c1\s+NO-GO\s+demo-faulty-box\s+box check of local/.test(s), 'c1 after reload');
    expect(t.screen()).not.toContain(offer);
    t.key(keyOf('rerun'));
    await t.waitFor(
      (s) => /c2\s+NO-GO\s+demo-faulty-box\s+box check of local: \d+ failed.*← rerun of c1/.test(s),
      'c2 re-checked, linked to c1',
      90_000,
    );
    t.key('q');
    await t.waitFor((s) => s.includes('[app exited'), 'exit', 30_000);

    // the report: the box's newest check (c2) with its fail and warn lines; the check cells are no runs
    const r = await runCli(['report', join(dir, 'nb.json')], {
      cwd: dir,
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    const md = readFileSync(join(dir, 'nb.report.md'), 'utf8');
    expect(md).toMatch(/\*\*Box check\*\* `local`: \*\*NO-GO\*\* \(c2, lane `demo-faulty-box`/);
    expect(md).toContain('## Platform Check');
    expect(md).toMatch(/- fail: GPU 0 clock event reasons: .*\(expected /);
    expect(md).toMatch(/- warn: .*NCCL_P2P_DISABLE/);
    expect(md).toContain('(0 cells)');
  });
});
