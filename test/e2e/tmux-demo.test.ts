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
  it('stall after step 5 → d dump → l batched-prefill → passes step 5 → q', async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    tmux = new TmuxSession(`demo${cols}`, cols, rows);
    const runs = mkdtempSync(join(tmpdir(), 'nsa-e2e-'));
    tmux.start(`node ${BIN} demo --step-ms 150 --steps 12 --runs-dir ${runs}`);

    await tmux.waitFor((s) => /DEMO/.test(s) && /baseline/.test(s), 'dashboard with the demo header');
    const stalled = await tmux.waitFor((s) => /STALL/.test(s), 'STALL banner', 30_000);
    expect(stalled).toMatch(/STALL[^\n]*step 6/);
    expect(stalled).toMatch(/in-step/);

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
      (s) => /batched-prefill/.test(s) && /step 0*(?:[7-9]|1[0-2])\b/.test(s) && !/STALL/.test(s),
      'new run past step 5',
      40_000,
    );
    expect(passed).not.toMatch(/STALL/);

    tmux.key('q');
    const confirm = await tmux.waitFor((s) => /quit/i.test(s) && /\by\/n\b|\[y\]/i.test(s), 'quit confirm');
    expect(confirm).toMatch(/nothing is left running|will be stopped/);
    tmux.key('y');
    await tmux.waitFor((s) => s.includes('[app exited 0]'), 'clean exit', 30_000);
  });
});
