import { describe, expect, it } from 'vitest';
import { trainingUnderWay } from '../../../src/session/straggler-sampling.js';

describe('straggler sampling waits for a finished step', () => {
  it('a rank at the start of step 1 (init, the first compile, the others still starting): not yet', () => {
    expect(trainingUnderWay([])).toBe(false);
    expect(trainingUnderWay([{ step: 0, phase: 'start' }])).toBe(false);
    expect(
      trainingUnderWay([
        { step: 1, phase: 'step_start' },
        { step: 0, phase: 'start' },
      ]),
    ).toBe(false);
  });

  it('step 1 done by one rank (its progress record), or step 2 begun: training', () => {
    expect(trainingUnderWay([{ step: 1, phase: 'progress' }])).toBe(true);
    expect(
      trainingUnderWay([
        { step: 0, phase: 'start' },
        { step: 2, phase: 'step_start' },
      ]),
    ).toBe(true);
  });
});
