/**
 * Step time from the trainer's own clock: a real nsa-vibe run on an H200
 * (test/fixtures/nsa-vibe-h200/batched, provenance in its README) writes a progress heartbeat as each
 * step ends; the digest's step-time series is the time between them, which the A/B interval reads.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'nsa-vibe-h200', 'batched');

describe('step time from progress heartbeats', () => {
  it('a real H200 capture: each step is the time between its progress beat and the one before', async () => {
    const beats = readFileSync(join(DIR, 'heartbeat_rank0.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ts: number; step: number; msg: string })
      .filter((b) => b.msg === 'progress');
    const expected = beats
      .slice(1)
      .map((b, i): [number, number] => [b.step, (b.ts - beats[i]!.ts) / (b.step - beats[i]!.step)]);
    const r = await analyzeDir(DIR);
    const got = r.digest!.series.stepMs!;
    expect(got.map(([s]) => s)).toEqual(expected.map(([s]) => s));
    for (const [i, [, ms]] of got.entries()) expect(ms / 1000).toBeCloseTo(expected[i]![1], 6);
  });
});
