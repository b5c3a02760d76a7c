/**
 * The teardown watch compares the ranks' processes (one exited while another lives): with fewer
 * than two pids known there is nothing to compare, and its timer wakes the process once a second
 * instead of four times (an idle dashboard's wake-ups); once two are known, every 250 ms again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProbeFile } from '../../../src/runs/probe-file.js';
import { LiveModel } from '../../../src/session/live-model.js';
import { TeardownSnapshot } from '../../../src/session/teardown-snapshot.js';
import type { Target } from '../../../src/targets/target.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('the teardown watch’s pace', () => {
  it('looks once a second while fewer than two pids are known, every 250 ms after', async () => {
    vi.useFakeTimers();
    let known: Array<[number, number]> = [];
    let asked = 0;
    const snap = new TeardownSnapshot({
      target: { kind: 'local' } as Target,
      model: new LiveModel(),
      probes: {} as ProbeFile,
      ranks: () => {
        asked++;
        return known;
      },
      watchOutput: false,
    });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(asked).toBeGreaterThanOrEqual(9);
    expect(asked).toBeLessThanOrEqual(11);
    // two ranks of this process's own (alive): looked at every 250 ms, nothing exited
    known = [
      [0, process.pid],
      [1, process.pid],
    ];
    await vi.advanceTimersByTimeAsync(1000);
    asked = 0;
    await vi.advanceTimersByTimeAsync(10_000);
    // each look asks twice (the count, then the pids it reads)
    expect(asked).toBeGreaterThanOrEqual(70);
    expect(snap.signSeen()).toBeNull();
    snap.stop();
  });
});
