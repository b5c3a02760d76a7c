/**
 * A hang that recovered stays said: a rank stopped (SIGSTOP, state T) long enough to be a confirmed
 * hang, then continued, finishes its run; the verdict is still pass, and its summary and reasons
 * say how long it was hung, where, and what the checks found. The folder (test/fixtures/
 * recovered-sigstop) is what a live session leaves: heartbeats, nsa-dbg's /proc checks, exit_code.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { judge } from '../../../src/analysis/acceptance.js';
import { recoveredLine, recoveredSummary } from '../../../src/analysis/recovered.js';
import type { PastStallReport } from '../../../src/analysis/result.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'recovered-sigstop');
const LINE = 'recovered after 79 s stalled at step 6 (stopped, state T)';

describe('a hang that recovered', () => {
  it('is in the verdict’s summary and reasons, and decides nothing', async () => {
    const r = await analyzeDir(DIR);
    expect(r.verdict).toBe('pass');
    expect(r.summary).toMatch(new RegExp(`^pass: 10 steps, .*; ${LINE.replace(/[()]/g, '\\$&')}$`));
    expect(r.pastStalls).toHaveLength(1);
    expect(r.pastStalls[0]).toMatchObject({ step: 6, state: 'stuck', evidence: { procState: 'T' } });
    const acc = judge(r, { finiteLoss: true, noStall: true }, 10);
    expect(acc).toMatchObject({ go: true, reasons: [LINE] });
  });

  it('words: what the checks found, and the newest one first with a count of the others', () => {
    const past = (step: number, silenceS: number, extra: Partial<PastStallReport>): PastStallReport => ({
      rank: 0,
      step,
      where: 'in-step',
      silenceS,
      thresholdS: 5,
      declaredTs: 0,
      resumedTs: 0,
      ...extra,
    });
    const spin = past(3, 41.6, {
      state: 'stuck',
      evidence: { procState: 'R', cpuPct: 99.2, wchan: '', samples: 3, framesMoved: false },
    });
    const native = past(9, 120, {
      state: 'blocked-native',
      evidence: { procState: 'S', cpuPct: 0, wchan: 'futex', samples: 0, framesMoved: false },
    });
    // a silence found busy, or never checked, is a slow step, not a hang that recovered
    const slow = past(12, 30, {});
    expect(recoveredLine(spin as Parameters<typeof recoveredLine>[0])).toBe(
      'recovered after 42 s stalled at step 3 (spinning, CPU 99%)',
    );
    expect(recoveredSummary([spin, native, slow])).toBe(
      'recovered after 120 s stalled at step 9 (blocked outside Python) (and 1 earlier)',
    );
    expect(recoveredSummary([slow])).toBeNull();
  });
});
