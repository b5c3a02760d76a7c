import { describe, expect, it } from 'vitest';
import { LAUNCHER_TEARDOWN_GRACE_MS, launcherTeardownDone } from '../../../src/session/launcher-teardown.js';

/** a fake clock: sleeping moves it; the run ends at `endsAtMs` (never: Infinity) */
function world(opts: { signAtMs: number | null; endsAtMs: number; nowMs: number }) {
  let now = opts.nowMs;
  const slept: number[] = [];
  const wait = launcherTeardownDone({
    sign: () => (opts.signAtMs === null ? null : { what: 'local rank 2 crashed', atMs: opts.signAtMs }),
    exited: () => now >= opts.endsAtMs,
    nowMs: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  });
  return { wait, now: () => now, slept };
}

describe('the stop of a confirmed hang waits for a launcher already tearing the run down', () => {
  it('no sign of teardown: the stop comes at once', async () => {
    const w = world({ signAtMs: null, endsAtMs: Number.POSITIVE_INFINITY, nowMs: 7_000 });
    expect(await w.wait).toBe('no teardown');
    expect(w.slept).toEqual([]);
  });

  it('a rank crashed 6 s before the hang was confirmed; torchrun stops the rest 9 s after the crash: no stop of ours', async () => {
    const w = world({ signAtMs: 1_000, endsAtMs: 10_000, nowMs: 7_000 });
    expect(await w.wait).toBe('ended');
    expect(w.now()).toBe(10_000);
  });

  it('the launcher never ends the run: the stop comes when the grace after the sign is over, not later', async () => {
    const w = world({ signAtMs: 1_000, endsAtMs: Number.POSITIVE_INFINITY, nowMs: 7_000 });
    expect(await w.wait).toBe('grace over');
    expect(w.now()).toBe(1_000 + LAUNCHER_TEARDOWN_GRACE_MS);
  });

  it('a sign seen long before the hang (a traceback the trainer survived) delays nothing', async () => {
    const w = world({
      signAtMs: 1_000,
      endsAtMs: Number.POSITIVE_INFINITY,
      nowMs: 1_000 + LAUNCHER_TEARDOWN_GRACE_MS + 1,
    });
    expect(await w.wait).toBe('no teardown');
    expect(w.slept).toEqual([]);
  });

  it('the run already ended: at once', async () => {
    const w = world({ signAtMs: 1_000, endsAtMs: 5_000, nowMs: 7_000 });
    expect(await w.wait).toBe('ended');
    expect(w.slept).toEqual([]);
  });
});
