import { describe, expect, it } from 'vitest';
import { liveLine } from '../../../src/notebook/live-line.js';
import { emptyDashboardState } from '../../../src/session/state.js';

const running = emptyDashboardState({
  runId: 'r1',
  runState: 'running',
  step: 5,
  stepsDone: 4,
  totalSteps: 8,
  loss: [
    { step: 3, value: 5.7186 },
    { step: 4, value: 5.6825 },
  ],
  toks: [
    { step: 3, value: 86 },
    { step: 4, value: 84.2 },
  ],
});

describe('the notebook status line of a running cell', () => {
  it('says the step, the last loss and toks/s', () => {
    expect(liveLine('c3', 'batched-prefill', running)).toBe(
      'c3 batched-prefill · step 4/8 · loss 5.6825 · 84.2 toks/s',
    );
    expect(liveLine('c3', 'batched-prefill', emptyDashboardState({ runState: 'starting' }))).toBe(
      'c3 batched-prefill · starting',
    );
  });

  it('adds SUSPECT while a silence is checked, HANG once it is confirmed, BUSY when found alive', () => {
    const at = (verdict: 'suspect' | 'hang' | 'busy', summary: string) =>
      liveLine('c1', 'baseline', { ...running, verdict: { verdict, summary } });
    expect(at('suspect', 'suspect: silent 3 s at step 5 (in-step), rank 0; checking — R, 99% CPU')).toBe(
      'c1 baseline · step 4/8 · loss 5.6825 · 84.2 toks/s · SUSPECT: silent 3 s at step 5 (in-step), rank 0; checking — R, 99% CPU',
    );
    expect(at('hang', 'hang at step 5 (in-step), rank 0 — stuck: spinning')).toBe(
      'c1 baseline · step 4/8 · loss 5.6825 · 84.2 toks/s · HANG: hang at step 5 (in-step), rank 0 — stuck: spinning',
    );
    expect(at('busy', 'frames moving — step 1 (in-step), rank 0, still running')).toMatch(
      / · BUSY: frames moving/,
    );
    // a passing run's own word needs no alarm
    expect(
      liveLine('c1', 'baseline', { ...running, verdict: { verdict: 'running', summary: 'no stall seen' } }),
    ).toBe('c1 baseline · step 4/8 · loss 5.6825 · 84.2 toks/s');
  });
});
