/**
 * `analyze` puts the finding first: slow steps of one cause (the output said they evaluated) or on
 * one grid become one line, identical dumps one line with a count. On real captures: nanoGPT
 * evaluating every 50 iterations with one 17.7 s iteration (test/fixtures/nanogpt-evals), and the
 * demo's step-5 hang sampled 16 times (test/fixtures/demo-hang).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  groupDumps,
  periodOf,
  slowGroupText,
  summariseSlowSteps,
} from '../../../src/analysis/slow-groups.js';
import type { SlowStep } from '../../../src/analysis/step-stats.js';
import { formatReport } from '../../../src/cli/commands/analyze.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures');

describe('slow steps of nanoGPT evaluating every 50 iterations (real run)', () => {
  it('finds the evaluations in the output and groups them; the long iteration is the finding', async () => {
    const r = await analyzeDir(join(FIX, 'nanogpt-evals'));
    const causes = r.digest?.excerpts.causes ?? {};
    // every evaluation step the output announced, none of the ordinary ones
    expect(Object.values(causes).every((c) => c === 'evaluation')).toBe(true);
    expect(Object.keys(causes).map(Number)).toEqual(
      r.slowSteps.map((s) => s.step).filter((s) => s % 50 === 0),
    );
    const { findings, groups } = summariseSlowSteps(r.slowSteps, causes);
    expect(findings[0]).toMatchObject({ step: 572, ranks: [0] });
    expect(findings[0]!.seconds).toBeGreaterThan(10);
    expect(findings.map((f) => f.step)).not.toContain(50);
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ cause: 'evaluations', every: 50, ranks: [0] });
    expect(groups[0]!.steps.length).toBe(r.slowSteps.filter((s) => s.step % 50 === 0).length);
    expect(slowGroupText(groups[0]!)).toMatch(
      /^\d+ evaluations, 0\.\d–0\.\d s, every 50 steps \(steps 0–600, rank 0\)$/,
    );
  });

  it('analyze prints the long step first and the evaluations as one line', async () => {
    const text = formatReport(await analyzeDir(join(FIX, 'nanogpt-evals')));
    const lines = text.split('\n');
    // the verdict line agrees in number: "1 silence checked", not "1 silence(s)"
    expect(lines[0]).toMatch(
      /^verdict: SLOW — slow: 600 steps, 1 silence checked and found busy \(step 572\), /,
    );
    expect(lines[0]).not.toMatch(/\(s\)|\b1 slow steps\b/);
    const slow = lines.filter((l) => l.startsWith('slow step'));
    expect(slow[0]).toMatch(/^slow step: rank 0, step 572: 17\.7 s \(median 0\.1 s\)$/);
    // right under the verdict: nothing before it (this run finished: no 'evidence stops' line)
    expect(lines[1]).toBe(slow[0]);
    expect(lines.filter((l) => / step (50|100|150): /.test(l))).toEqual([]);
    expect(lines.filter((l) => l.startsWith('slow steps: '))).toEqual([
      expect.stringMatching(/^slow steps: \d+ evaluations, .*every 50 steps/),
    ]);
    // the finding comes before the run's numbers and the routine
    expect(lines.indexOf(slow[0]!)).toBeLessThan(lines.findIndex((l) => l.startsWith('steps reached')));
  });
});

describe('the demo hang sampled again and again (real run)', () => {
  it('collapses dumps of one place into one line with a count, whichever way they were taken', async () => {
    const r = await analyzeDir(join(FIX, 'demo-hang'));
    expect(r.dumps.length).toBe(16);
    const groups = groupDumps(r.dumps);
    expect(groups.map((g) => [g.count, g.kinds])).toEqual([
      [
        16,
        [
          { kind: 'faulthandler', count: 8 },
          { kind: 'signal', signal: 10, count: 8 },
        ],
      ],
    ]);
    const dumpLines = formatReport(r)
      .split('\n')
      .filter((l) => l.startsWith('dump'));
    expect(dumpLines).toEqual([
      expect.stringMatching(
        /^dumps ×16: nsa-dbg-stacks_rank0_pid15816\.log@1795688444\.877 … stackdump_1795688475\.txt \(8 faulthandler dumps; 8 signal dumps, signal 10 SIGUSR1\) main thread in _forward_prefill_sequential \([^)]*nsa_attention\.py:175\)$/,
      ),
    ]);
  });

  it('keeps dumps of different places apart', async () => {
    const r = await analyzeDir(join(FIX, 'demo-hang'));
    const moved = { ...r.dumps[3]!, mainThreadTop: { ...r.dumps[3]!.mainThreadTop!, line: 1 } };
    const groups = groupDumps([...r.dumps.slice(0, 3), moved, ...r.dumps.slice(4)]);
    expect(groups.map((g) => g.count)).toEqual([15, 1]);
    // the real H100 capture: three dumps in three places stay three lines
    const h100 = await analyzeDir(join(FIX, 'h100-nsa-vibe-seq'));
    expect(groupDumps(h100.dumps).map((g) => g.count)).toEqual([1, 1, 1]);
  });
});

describe('summariseSlowSteps without words from the output', () => {
  const at = (step: number, seconds: number, rank = 0): SlowStep => ({
    rank,
    step,
    seconds,
    medianSeconds: 0.1,
  });

  it('groups steps on one grid (same interval, same offset); a step off it stays a finding', () => {
    const slow = [100, 200, 300, 400, 500].map((s) => at(s, 0.5));
    const { findings, groups } = summariseSlowSteps([...slow, at(237, 0.6)]);
    expect(groups).toEqual([
      { cause: null, steps: [100, 200, 300, 400, 500], ranks: [0], minS: 0.5, maxS: 0.5, every: 100 },
    ]);
    expect(findings.map((f) => f.step)).toEqual([237]);
    expect(slowGroupText(groups[0]!)).toBe('5 slow steps, 0.5 s, every 100 steps (steps 100–500, rank 0)');
  });

  it('a stall that falls on the grid is still the finding, not one more routine step', () => {
    const slow = [50, 100, 150, 200].map((s) => at(s, 0.4));
    const { findings, groups } = summariseSlowSteps([...slow, at(250, 78.6)], {
      50: 'evaluation',
      100: 'evaluation',
      150: 'evaluation',
      200: 'evaluation',
      250: 'evaluation',
    });
    expect(findings.map((f) => [f.step, f.seconds])).toEqual([[250, 78.6]]);
    expect(groups[0]).toMatchObject({ cause: 'evaluations', steps: [50, 100, 150, 200], every: 50 });
  });

  it('merges the ranks of one step; two scattered slow steps are no pattern', () => {
    const { findings, groups } = summariseSlowSteps([at(7, 3, 0), at(7, 4, 1), at(19, 2, 0)]);
    expect(groups).toEqual([]);
    expect(findings).toEqual([
      { step: 7, seconds: 4, medianSeconds: 0.1, ranks: [0, 1] },
      { step: 19, seconds: 2, medianSeconds: 0.1, ranks: [0] },
    ]);
  });

  it('analyze spells out the ten longest scattered slow steps and counts the rest', async () => {
    // no two gaps alike: no grid
    const steps = [3, 8, 14, 21, 29, 38, 48, 59, 71, 84, 98, 113];
    const slow = steps.map((s, i) => at(s, 1 + i / 10));
    const { findings } = summariseSlowSteps(slow);
    expect(findings.map((f) => f.step)).toEqual([...steps].reverse());
    const r = { ...(await analyzeDir(join(FIX, 'nanogpt-evals'))), slowSteps: slow, digest: undefined };
    const lines = formatReport(r).split('\n');
    expect(lines.filter((l) => l.startsWith('slow step: '))).toHaveLength(10);
    expect(lines).toContain('slow steps: 2 more slow steps, 1.0–1.1 s');
  });

  it('periodOf: the common divisor of the gaps, none below 2', () => {
    expect(periodOf([0, 50, 100, 250, 600])).toBe(50);
    expect(periodOf([3, 4, 9])).toBeNull();
    expect(periodOf([5])).toBeNull();
  });
});
