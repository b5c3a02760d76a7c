import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TmuxSession } from '../helpers/tmux.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
let tmux: TmuxSession | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
});

describe('demo-rank-stall in real tmux at 80×24', () => {
  it('3 ranks: the table, then the last rank named as the root cause, first, with its odd stack → q', async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    tmux = new TmuxSession('demoranks', 80, 24);
    const runs = mkdtempSync(join(tmpdir(), 'nsa-e2e-'));
    tmux.start(
      `node ${BIN} demo --lane demo-rank-stall --ranks 3 --step-ms 150 --steps 12 --runs-dir ${runs}`,
    );

    // a row appears once its rank's first heartbeat is read: on a loaded box rank 0's can come last
    const table = await tmux.waitFor(
      (s) => /^rank +step +lag/m.test(s) && [0, 1, 2].every((r) => new RegExp(`^ r${r} `, 'm').test(s)),
      'the per-rank table with 3 ranks',
      30_000,
    );
    expect(table).toMatch(/^ r0 .*\n r1 .*\n r2 /m);
    const named = await tmux.waitFor(
      (s) => /ROOT CAUSE rank 2/.test(s) && /^[A-Z] r0,1: all_reduce [^\n]*in collective/m.test(s),
      'root cause rank 2 and the stack diff',
      90_000,
    );
    const lines = named.split('\n');
    const head = lines.findIndex((l) => /^rank +step/.test(l));
    expect(lines[head + 1]).toMatch(/ROOT CAUSE rank 2/);
    // the root-cause rank first, then the others by rank
    expect(lines[head + 2]).toMatch(/^>r2 +3 /);
    expect(lines[head + 3]).toMatch(/^ r0 /);
    expect(lines[head + 4]).toMatch(/^ r1 /);
    // the ranks blocked in the collective gave their stacks at once (nsa-dbg's stack hook, from C)
    expect(named).toMatch(/^[A-Z] r2: backward [^\n]*ODD ONE OUT/m);
    // once confirmed, the header names the rank the verdict names: the one the others wait for
    const hang = await tmux.waitFor((s) => /HANG: /.test(s), 'the hang confirmed', 90_000);
    expect(hang).toMatch(/HANG: at step 3 \(in-step\), rank 2\b/);

    tmux.key('q');
    await tmux.waitFor((s) => /quit/i.test(s) && /\by\/n\b|\[y\]/i.test(s), 'quit confirm');
    tmux.key('y');
    await tmux.waitFor((s) => s.includes('[app exited'), 'exit', 30_000);
  }, 180_000);
});
