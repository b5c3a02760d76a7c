import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

// real H200 captures, kept beside the tests (test/fixtures/nsa-vibe-h200/README.md)
const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'nsa-vibe-h200');

describe('analyzeDir on the real H200 captures', () => {
  it('batched: incomplete, killed (exit 137) at step 17, slow step 5, one SIGUSR1 dump', async () => {
    const r = await analyzeDir(`${FIX}/batched`);
    expect(r.verdict).toBe('incomplete');
    expect(r.killed).toBe(true);
    expect(r.exitCode).toBe(137);
    expect(r.notes.join(' ')).toContain('killed (exit 137)');
    expect(r.stepsReached).toBe(17);
    expect(r.ranks).toEqual([0]);
    expect(r.stall).toBeNull();
    expect(r.lastPosition).toMatchObject({ rank: 0, step: 18, where: 'in-step' });
    expect(r.nan).toBeNull();
    expect(r.crash).toBeNull();
    expect(r.slowSteps).toHaveLength(1);
    expect(r.slowSteps[0]).toMatchObject({ rank: 0, step: 5 });
    expect(r.slowSteps[0]!.seconds).toBeCloseTo(26.4, 0);
    expect(r.slowSteps[0]!.medianSeconds).toBeGreaterThan(6);
    expect(r.slowSteps[0]!.medianSeconds).toBeLessThan(7.5);
    expect(r.pastStalls).toMatchObject([{ rank: 0, step: 5, where: 'in-step' }]);
    expect(r.throughput!.medianToksPerS).toBeGreaterThan(77);
    expect(r.throughput!.medianToksPerS).toBeLessThan(79);
    expect(r.memory!.peakReservedMiB).toBe(412);
    expect(r.dumps).toHaveLength(1);
    expect(r.dumps[0]).toMatchObject({
      file: 'stackdump_1795315501.txt',
      kind: 'signal',
      signal: 10,
      mainThreadTop: { function: 'grouped_selection_attention_packed', line: 298 },
      mainThreadUserTop: { function: 'grouped_selection_attention_packed', line: 298 },
    });
    expect(r.skippedLines).toBe(0);
  });

  it('nan: nan at step 3, loss explosion at step 2, exit 0', async () => {
    const r = await analyzeDir(`${FIX}/nan`);
    expect(r.verdict).toBe('nan');
    expect(r.nan).toEqual({ rank: 0, step: 3 });
    expect(r.lossExplosion).toMatchObject({ rank: 0, step: 2 });
    expect(r.exitCode).toBe(0);
    // the heartbeat file also holds an earlier process's records (append mode): not this run's steps
    expect(r.stepsReached).toBe(2);
    expect(r.crash).toBeNull();
    expect(r.signatures.map((s) => s.name)).toContain('non-finite-loss');
  });
});
