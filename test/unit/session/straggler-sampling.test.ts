import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StallDetector } from '../../../src/analysis/stall-detector.js';
import { HeartbeatReader } from '../../../src/ingest/heartbeat.js';
import { trainingUnderWay } from '../../../src/session/straggler-sampling.js';

// a real nsa-vibe run on an H100 (test/fixtures/h100-nsa-vibe-seq): step 1's start at boot, its
// progress 64 s later (the first step compiles), then a step every second or so
const REAL = join(import.meta.dirname, '..', '..', 'fixtures', 'h100-nsa-vibe-seq', 'heartbeat_rank0.jsonl');

describe('straggler sampling waits for a finished step', () => {
  it('the real heartbeats: not during the 64 s first step, from its progress record on', () => {
    const reader = new HeartbeatReader();
    const beats = [...reader.push(readFileSync(REAL)), ...reader.flush()];
    const d = new StallDetector();
    const under = beats.map((b) => {
      d.observe(b);
      return trainingUnderWay(d.check(b.ts));
    });
    expect(beats.slice(0, 3).map((b) => b.msg)).toEqual(['boot', 'beat', 'progress']);
    expect(under.slice(0, 3)).toEqual([false, false, true]);
    expect(under.slice(2).every(Boolean)).toBe(true);
  });

  it("several ranks: one rank in step 2 is enough; none past step 1's start is not", () => {
    const at = (step: number, phase: string) => ({ step, phase });
    expect(trainingUnderWay([])).toBe(false);
    expect(trainingUnderWay([at(1, 'step_start'), at(0, 'start')])).toBe(false);
    expect(trainingUnderWay([at(0, 'start'), at(2, 'step_start')])).toBe(true);
  });
});
