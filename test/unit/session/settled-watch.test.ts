/**
 * settledWatch answers what verdictSettled answers, asked every 250 ms by a stop that waits for a
 * hang's verdict, without judging every silent rank each time: not at all while the culprit last
 * found is still being asked (settled needs that request done), at most once a second otherwise.
 * At 512 ranks the judging four times a second took a fifth of the engine's time.
 */
import { describe, expect, it } from 'vitest';
import type { SettledStall } from '../../../src/analysis/rank-stacks.js';
import type { StackSampler } from '../../../src/runs/stack-sampler.js';
import type { LiveModel } from '../../../src/session/live-model.js';
import { settledWatch } from '../../../src/session/rank-dumps.js';

function fakes() {
  const state = { settled: null as SettledStall | null, busy: new Set<number>(), judged: 0, nowMs: 0 };
  const model = {
    settledStall: () => {
      state.judged++;
      return state.settled;
    },
  } as unknown as LiveModel;
  const sampler = { busyWith: (r: number) => state.busy.has(r) } as unknown as StackSampler;
  const watch = settledWatch(model, sampler, () => state.nowMs);
  return { state, watch };
}

describe('settledWatch', () => {
  it('judges at most once a second while no culprit is known', () => {
    const { state, watch } = fakes();
    for (let t = 0; t < 3000; t += 250) {
      state.nowMs = t;
      expect(watch()).toBe(false);
    }
    expect(state.judged).toBe(3);
  });

  it('judges nothing while the culprit is asked, and settles as soon as its request is done', () => {
    const { state, watch } = fakes();
    state.settled = { culprit: 7, waiting: [0, 1, 2] };
    state.busy.add(7);
    expect(watch()).toBe(false);
    expect(state.judged).toBe(1);
    for (let t = 250; t < 5000; t += 250) {
      state.nowMs = t;
      expect(watch()).toBe(false);
    }
    expect(state.judged).toBe(1);
    // the request is done: judged at once (not a second later), settled
    state.nowMs = 5010;
    state.busy.delete(7);
    expect(watch()).toBe(true);
    expect(state.judged).toBe(2);
  });

  it('a verdict that came apart meanwhile is not called settled', () => {
    const { state, watch } = fakes();
    state.settled = { culprit: 7, waiting: [0] };
    state.busy.add(7);
    expect(watch()).toBe(false);
    state.busy.delete(7);
    state.settled = null;
    state.nowMs = 250;
    expect(watch()).toBe(false);
    expect(state.judged).toBe(2);
  });
});
