/**
 * settledWatch answers what verdictSettled answers, asked every 250 ms by a stop that waits for a
 * hang's verdict, without judging every silent rank each time: at most once a second. At 512 ranks
 * the judging four times a second took a fifth of the engine's time.
 */
import { describe, expect, it } from 'vitest';
import type { SettledStall } from '../../../src/analysis/rank-stacks.js';
import type { LiveModel } from '../../../src/session/live-model.js';
import { settledWatch } from '../../../src/session/rank-dumps.js';

function fakes() {
  const state = { settled: null as SettledStall | null, judged: 0, nowMs: 0 };
  const model = {
    settledStall: () => {
      state.judged++;
      return state.settled;
    },
  } as unknown as LiveModel;
  return { state, watch: settledWatch(model, () => state.nowMs) };
}

describe('settledWatch', () => {
  it('judges at once, then at most once a second', () => {
    const { state, watch } = fakes();
    for (let t = 0; t < 3000; t += 250) {
      state.nowMs = t;
      expect(watch()).toBe(false);
    }
    expect(state.judged).toBe(3);
  });

  it('says settled at the first judgement that finds it so', () => {
    const { state, watch } = fakes();
    expect(watch()).toBe(false);
    state.settled = { culprit: 7, waiting: [0, 1, 2] };
    state.nowMs = 500;
    expect(watch()).toBe(false);
    state.nowMs = 1000;
    expect(watch()).toBe(true);
    expect(state.judged).toBe(2);
  });
});
