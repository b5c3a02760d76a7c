import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

// nsa-vibe's own scripts/train_showcase.py on one H100 (sequential prefill, S=512, B=1) under
// `nsa-dbg run --headless --lane seq-check` (first-step allowance 30 s): the run dir it left,
// with nsa-dbg's probe file (test/device/README.md)
const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'h100-nsa-vibe-seq');

describe('analyzeDir on the real nsa-vibe sequential run (H100)', () => {
  it('slow but alive: the 64 s first step was checked, found busy (frames move), GO', async () => {
    const r = await analyzeDir(FIX);
    expect(r.verdict).toBe('slow');
    expect(r.stall).toBeNull();
    expect(r.stepsReached).toBe(4);
    expect(r.exitCode).toBe(0);
    expect(r.detector).toMatchObject({ firstStepS: 30 }); // the lane's, from command.json
    expect(r.suspects).toHaveLength(1);
    expect(r.suspects[0]).toMatchObject({ rank: 0, step: 1, where: 'in-step', state: 'busy' });
    expect(r.suspects[0]!.evidence).toMatchObject({ procState: 'R', framesMoved: true, samples: 2 });
    expect(r.suspects[0]!.silenceS).toBeGreaterThan(60);
    // the dumps were taken 1.75 s apart and landed in two different frames of nsa-vibe's own code
    expect(r.dumps.map((d) => d.mainThreadTop?.function)).toEqual([
      'attention_bgh',
      'select_topn_ranges',
      '_engine_run_backward',
    ]);
    expect(r.dumps.every((d) => d.rank === 0)).toBe(true);
    expect(r.dumpRequests.map((d) => d.outcome)).toEqual(['written', 'written', 'written']);
    expect(r.hotFrames.map((h) => h.function)).toEqual(
      expect.arrayContaining(['select_topn_ranges', 'attention_bgh']),
    );
    expect(r.summary).toMatch(/checked and found busy \(step 1\)/);
  });

  it('judged with the default settings (no command.json) it is still slow, never a hang', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-h100-'));
    try {
      cpSync(FIX, dir, { recursive: true });
      rmSync(join(dir, 'command.json'));
      const r = await analyzeDir(dir);
      // the 64 s first step passes the default 60 s allowance too: its silence is the one the box
      // checked (frames moving), so the verdict is the same
      expect(r.verdict).toBe('slow');
      expect(r.detector.firstStepS).toBe(60);
      expect(r.stall).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
