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

describe.each([
  [80, 24],
  [120, 40],
])('the one-minute story in real tmux at %i×%i', (cols, rows) => {
  it('silence after step 5: SUSPECT → checked → HANG (stuck) → s hot frames → d dump → l batched-prefill → passes step 5 → q', async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    tmux = new TmuxSession(`demo${cols}`, cols, rows);
    const runs = mkdtempSync(join(tmpdir(), 'nsa-e2e-'));
    tmux.start(`node ${BIN} demo --step-ms 150 --steps 12 --runs-dir ${runs}`);

    await tmux.waitFor((s) => /DEMO/.test(s) && /baseline/.test(s), 'dashboard with the demo header');
    // silence alone makes the rank suspect; nsa-dbg checks it on the box before calling it a hang
    const suspect = await tmux.waitFor((s) => /SUSPECT/.test(s), 'SUSPECT banner', 30_000);
    expect(suspect).toMatch(/SUSPECT[^\n]*step 6/);
    expect(suspect).not.toMatch(/HANG rank/);
    // the demo spins on one line: stuck once the samples agree for 30 s
    const stalled = await tmux.waitFor((s) => /HANG rank 0 \(stuck\)/.test(s), 'HANG (stuck) banner', 60_000);
    expect(stalled).toMatch(/HANG[^\n]*step 6/);
    expect(stalled).toMatch(/in-step/);

    tmux.key('s');
    await tmux.waitFor(
      (s) => /hot frames · \d+ samples/.test(s) && /100% +\d+x _forward_prefill_sequential/.test(s),
      'hot frames table',
      30_000,
    );

    tmux.key('d');
    await tmux.waitFor(
      (s) => s.includes('_forward_prefill_sequential'),
      'dump pane with the main thread',
      5000,
    );

    tmux.key('l');
    await tmux.waitFor((s) => s.includes('batched-prefill'), 'lane picker');
    tmux.type('batch');
    await tmux.waitFor((s) => /filter: batch/.test(s) && !/\bconservative\b/.test(s), 'filtered picker');
    tmux.key('Enter');
    await tmux.waitFor((s) => /\by\/n\b|\[y\]/i.test(s), 'lane confirm');
    tmux.key('y');
    const passed = await tmux.waitFor(
      (s) => /batched-prefill/.test(s) && /step 0*(?:[7-9]|1[0-2])\b/.test(s) && !/HANG rank/.test(s),
      'new run past step 5',
      40_000,
    );
    expect(passed).not.toMatch(/HANG rank/);

    tmux.key('q');
    const confirm = await tmux.waitFor((s) => /quit/i.test(s) && /\by\/n\b|\[y\]/i.test(s), 'quit confirm');
    expect(confirm).toMatch(/nothing is left running|will be stopped/);
    tmux.key('y');
    await tmux.waitFor((s) => s.includes('[app exited 0]'), 'clean exit', 30_000);
  }, 180_000);
});
