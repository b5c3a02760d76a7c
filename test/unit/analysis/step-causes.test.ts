import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { causeOfLine, StepCauses } from '../../../src/analysis/step-causes.js';

const LOG = join(import.meta.dirname, '..', '..', 'fixtures', 'nanogpt-evals', 'stdout.log');

describe('what a step did, from the lines printed before its step line', () => {
  it("names nanoGPT's evaluation and checkpoint lines, not its iteration lines", () => {
    expect(causeOfLine('step 50: train loss 5.4233, val loss 5.4231')?.one).toBe('evaluation');
    expect(causeOfLine('saving checkpoint to out')?.one).toBe('checkpoint save');
    expect(causeOfLine('iter 50: loss 5.4330, time 246.07ms, mfu 0.00%')).toBeNull();
    expect(causeOfLine('step 0001 | loss 5.7014 | lr 2.00e-05 | toks/s 64')).toBeNull();
  });

  it('gives each evaluation to the iteration whose time holds it (real nanoGPT output)', () => {
    const causes = new StepCauses();
    for (const line of readFileSync(LOG, 'utf8').split('\n')) {
      causes.line(line);
      const m = /^iter (\d+):/.exec(line);
      if (m) causes.step(Number(m[1]));
    }
    const steps = Array.from({ length: 601 }, (_, i) => i);
    expect(causes.of(steps)).toEqual(
      Object.fromEntries(Array.from({ length: 13 }, (_, i) => [String(i * 50), 'evaluation'])),
    );
  });

  it('a cause on the step line itself is not the next step’s', () => {
    const causes = new StepCauses();
    causes.line('step 3 | eval_loss 2.0');
    causes.step(3);
    causes.line('step 4 | loss 2.0');
    causes.step(4);
    expect(causes.of([3, 4])).toEqual({});
  });
});
