import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StallDetector } from '../../../src/analysis/stall-detector.js';
import type { BeatEvent } from '../../../src/ingest/events.js';
import { HeartbeatReader } from '../../../src/ingest/heartbeat.js';

// real H200 captures, kept beside the tests (test/fixtures/nsa-vibe-h200/README.md)
const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'nsa-vibe-h200');

const beat = (rank: number, step: number, ts: number, msg: string, phase?: string): BeatEvent => ({
  kind: 'beat',
  rank,
  step,
  ts,
  msg,
  phase,
  extra: {},
});

/** boot, then steps of `dt` seconds with beat/progress/step_end (or without beats). */
function run(
  d: StallDetector,
  rank: number,
  steps: number,
  dt: number,
  opts: { beats?: boolean; t0?: number } = {},
): number {
  let t = opts.t0 ?? 0;
  d.observe(beat(rank, 0, t, 'boot', 'start'));
  for (let s = 1; s <= steps; s++) {
    if (opts.beats !== false) d.observe(beat(rank, s, t + 0.001, 'beat', 'step_start'));
    t += dt;
    d.observe(beat(rank, s, t, 'progress'));
    d.observe(beat(rank, s, t + 0.001, 'step_end', 'end'));
    t += 0.002;
  }
  return t;
}

describe('StallDetector on the real batched heartbeat', () => {
  const reader = new HeartbeatReader();
  const beats = [...reader.push(readFileSync(join(FIX, 'batched/heartbeat_rank0.jsonl'))), ...reader.flush()];

  it('declares a stall during the 20 s freeze in step 5 and clears it when beats resume; normal steps never', () => {
    const d = new StallDetector();
    const stalledAt: number[] = [];
    let prev: BeatEvent | null = null;
    for (const b of beats) {
      if (prev !== null) {
        // between beats, every 0.25 s
        for (let t = prev.ts + 0.25; t < b.ts; t += 0.25) {
          const s = d.stalls(t);
          if (s.length > 0) {
            expect(s[0]).toMatchObject({ rank: 0, step: 5, where: 'in-step' });
            stalledAt.push(t);
          }
        }
      }
      d.observe(b);
      expect(d.stalls(b.ts)).toEqual([]);
      expect(d.check(b.ts)[0]!.stall).toBeNull();
      prev = b;
    }
    const step5 = beats.find((b) => b.step === 5 && b.msg === 'beat')!;
    const progress5 = beats.find((b) => b.step === 5 && b.msg === 'progress')!;
    expect(stalledAt.length).toBeGreaterThan(0);
    // declared after 3 × the longest recent step (~20.5 s), before the step finished at 26.4 s
    expect(stalledAt[0]! - step5.ts).toBeGreaterThan(20);
    expect(stalledAt[0]! - step5.ts).toBeLessThan(21);
    expect(stalledAt.at(-1)!).toBeLessThan(progress5.ts);
    expect(d.pastStalls()).toMatchObject([{ rank: 0, step: 5, where: 'in-step' }]);
    expect(d.pastStalls()[0]!.silenceS).toBeCloseTo(26.37, 1);
  });
});

describe('StallDetector localisation', () => {
  it('in-step: step_start without progress', () => {
    const d = new StallDetector();
    const t = run(d, 0, 5, 2);
    d.observe(beat(0, 6, t, 'beat', 'step_start'));
    expect(d.stalls(t + 5)).toEqual([]);
    const [s] = d.stalls(t + 7);
    expect(s).toMatchObject({ rank: 0, step: 6, where: 'in-step' });
    expect(s!.thresholdS).toBeCloseTo(6, 1);
    const view = d.check(t + 7)[0]!;
    expect(view.stall).toMatchObject({ step: 6, where: 'in-step' });
    expect(view.expectedS).toBeCloseTo(2, 2);
    expect(view.gaps.length).toBeGreaterThan(0);
  });

  it('end-of-step: progress without step_end; rollover: step_end without the next step_start', () => {
    const d = new StallDetector();
    let t = run(d, 0, 5, 2);
    d.observe(beat(0, 6, t, 'beat', 'step_start'));
    t += 2;
    d.observe(beat(0, 6, t, 'progress'));
    expect(d.stalls(t + 7)[0]).toMatchObject({ step: 6, where: 'end-of-step' });
    d.observe(beat(0, 6, t + 0.001, 'step_end', 'end'));
    expect(d.stalls(t + 7)[0]).toMatchObject({ step: 6, where: 'rollover' });
  });

  it('boot: nothing after boot, with the first-step allowance', () => {
    const d = new StallDetector({ firstStepAllowanceS: 30 });
    d.observe(beat(0, 0, 100, 'boot', 'start'));
    expect(d.stalls(125)).toEqual([]);
    expect(d.stalls(131)[0]).toMatchObject({ step: 0, where: 'boot' });
  });

  it('allows a slow first step', () => {
    const d = new StallDetector({ firstStepAllowanceS: 60 });
    d.observe(beat(0, 0, 0, 'boot', 'start'));
    d.observe(beat(0, 1, 0.01, 'beat', 'step_start'));
    expect(d.stalls(50)).toEqual([]);
    expect(d.stalls(61)[0]).toMatchObject({ step: 1, where: 'in-step' });
  });

  it('works with log-step-only heartbeats (no beat records): progress → progress', () => {
    const d = new StallDetector();
    const t = run(d, 0, 6, 3, { beats: false });
    expect(d.stalls(t + 8)).toEqual([]);
    expect(d.stalls(t + 10)[0]).toMatchObject({ step: 7, where: 'in-step' });
  });

  it('multi-rank: the rank that stalled first is named first', () => {
    const d = new StallDetector();
    run(d, 0, 3, 2);
    const t1 = run(d, 1, 3, 2);
    // rank 1 starts step 4 and stalls in it; rank 0 starts step 4 a bit later and waits on rank 1
    d.observe(beat(1, 4, t1, 'beat', 'step_start'));
    d.observe(beat(0, 4, t1 + 1.5, 'beat', 'step_start'));
    const stalls = d.stalls(t1 + 30);
    expect(stalls.map((s) => s.rank)).toEqual([1, 0]);
    expect(stalls[0]).toMatchObject({ step: 4, where: 'in-step' });
  });

  it('one rank asked alone (stallOf) says what the whole list says of it, at every moment', () => {
    const d = new StallDetector();
    run(d, 0, 3, 2);
    const t1 = run(d, 1, 3, 2);
    run(d, 2, 3, 2);
    d.observe(beat(1, 4, t1, 'beat', 'step_start'));
    d.observe(beat(0, 4, t1 + 1.5, 'beat', 'step_start'));
    for (const at of [t1 + 1, t1 + 5, t1 + 12, t1 + 30])
      for (const rank of [0, 1, 2, 3])
        expect(d.stallOf(rank, at)).toEqual(d.stalls(at).find((s) => s.rank === rank) ?? null);
    expect(d.stallOf(1, t1 + 30)).toMatchObject({ rank: 1, step: 4, where: 'in-step' });
  });

  it('anyStall says whether the list of stalls is empty, at every moment', () => {
    const d = new StallDetector();
    expect(d.anyStall(1000)).toBe(false);
    run(d, 0, 3, 2);
    const t1 = run(d, 1, 3, 2);
    d.observe(beat(1, 4, t1, 'beat', 'step_start'));
    d.observe(beat(0, 4, t1 + 1.5, 'beat', 'step_start'));
    const seen = new Set<boolean>();
    for (const at of [t1 + 0.5, t1 + 1, t1 + 5, t1 + 12, t1 + 30]) {
      expect(d.anyStall(at)).toBe(d.stalls(at).length > 0);
      seen.add(d.anyStall(at));
    }
    expect([...seen].sort()).toEqual([false, true]);
  });

  it('a boot of a new process resets what was learned', () => {
    const d = new StallDetector();
    const t = run(d, 0, 5, 2);
    d.observe(beat(0, 0, t + 100, 'boot', 'start'));
    expect(d.check(t + 100)[0]).toMatchObject({ step: 0, phase: 'start', gaps: [] });
  });
});

describe('pauses between steps that come back (eval, checkpoints)', () => {
  it('a checkpoint as long as the last one, 50 steps later, is not a stall', () => {
    const d = new StallDetector();
    let t = run(d, 0, 20, 0.25);
    // a 7 s checkpoint after step 20, learned when the next step starts
    t += 7;
    d.observe(beat(0, 21, t, 'beat', 'step_start'));
    t += 0.25;
    d.observe(beat(0, 21, t, 'progress'));
    d.observe(beat(0, 21, t + 0.001, 'step_end', 'end'));
    // 50 more ordinary steps: the recent history forgets the checkpoint
    for (let s = 22; s < 72; s++) {
      t += 0.003;
      d.observe(beat(0, s, t, 'beat', 'step_start'));
      t += 0.25;
      d.observe(beat(0, s, t, 'progress'));
      d.observe(beat(0, s, t + 0.001, 'step_end', 'end'));
    }
    // the next checkpoint, 7.5 s into it
    expect(d.stalls(t + 7.5)).toEqual([]);
    // a hang inside a step is still found after the floor
    d.observe(beat(0, 72, t + 8, 'beat', 'step_start'));
    expect(d.stalls(t + 8 + 5.5)).toHaveLength(1);
  });
});

describe('StallDetector: the first step waits for the last rank to start', () => {
  // 256 ranks started one by one on a loaded box: rank 0 booted at 0 s and sat in step 1's
  // collective until rank 255 booted at 90 s; none of that is a hang
  const staggered = () => {
    const d = new StallDetector();
    for (let rank = 0; rank < 4; rank++) {
      const t = rank * 30; // ranks 0..3 start at 0, 30, 60, 90 s
      d.observe(beat(rank, 0, t, 'boot', 'start'));
      d.observe(beat(rank, 1, t + 0.5, 'beat', 'step_start'));
    }
    return d;
  };

  it('no rank in its first step is silent while the others still start', () => {
    const d = staggered();
    expect(d.stalls(100)).toEqual([]);
    expect(d.stalls(150)).toEqual([]);
  });

  it('the allowance runs out 60 s after the last start, for every rank still in step 1', () => {
    const d = staggered();
    const s = d.stalls(150.2);
    // rank 3 started last: its own 60 s count from its step start at 90.5 s
    expect(s.map((x) => x.rank)).toEqual([0, 1, 2]);
    expect(s[0]).toMatchObject({ step: 1, where: 'in-step' });
    // the silence still counts from the rank's own last record, its threshold from the last start
    expect(s[0]!.silenceS).toBeCloseTo(149.7, 5);
    expect(s[0]!.thresholdS).toBeCloseTo(90 + 60 - 0.5, 5);
    expect(d.stalls(150.6).map((x) => x.rank)).toEqual([0, 1, 2, 3]);
  });

  it('step 1 ending once the last rank arrived is no past stall; a single rank still gets 60 s', () => {
    const d = staggered();
    for (let rank = 0; rank < 4; rank++) d.observe(beat(rank, 1, 91, 'progress'));
    expect(d.pastStalls()).toEqual([]);
    const one = new StallDetector();
    one.observe(beat(0, 0, 0, 'boot', 'start'));
    one.observe(beat(0, 1, 0.5, 'beat', 'step_start'));
    expect(one.stalls(60)).toEqual([]);
    expect(one.stalls(61).map((x) => x.rank)).toEqual([0]);
    one.observe(beat(0, 1, 70, 'progress'));
    expect(one.pastStalls()).toMatchObject([{ rank: 0, step: 1, where: 'in-step' }]);
  });

  it('past the first step, a late start elsewhere extends nothing', () => {
    const d = new StallDetector();
    const t = run(d, 0, 5, 1);
    d.observe(beat(0, 6, t, 'beat', 'step_start'));
    d.observe(beat(1, 0, t + 1, 'boot', 'start'));
    expect(d.stalls(t + 5.5).map((x) => x.rank)).toEqual([0]);
  });
});

describe('StallDetector: a late line of an earlier step is not the rank moving on', () => {
  // heartbeats stop at step 11 for 20 s (SIGSTOP); the output lines, timed by their arrival, come
  // seconds late on a loaded box: step 10's line arrives during the silence
  const stopped = (lateStep: number) => {
    const d = new StallDetector();
    const t = run(d, 0, 10, 1);
    for (let s = 1; s <= 10; s++)
      d.observe({ rank: 0, step: s, ts: 1 + (s - 1) * 1.002, msg: 'progress' }, 'output');
    d.observe(beat(0, 11, t, 'beat', 'step_start'));
    d.observe({ rank: 0, step: lateStep, ts: t + 4, msg: 'progress' }, 'output');
    d.observe(beat(0, 11, t + 20, 'progress'));
    return d;
  };

  it("step 10's line arriving during step 11's silence: the stall is kept", () => {
    expect(stopped(10).pastStalls()).toMatchObject([{ rank: 0, step: 11, where: 'in-step' }]);
  });

  it("step 11's own line 4 s into the silence: the rank was still silent 16 s after it, the stall is kept", () => {
    expect(stopped(11).pastStalls()).toMatchObject([{ rank: 0, step: 11, where: 'in-step' }]);
  });

  it("step lines every second through the heartbeats' silence: the rank trained on, no stall", () => {
    const d = new StallDetector();
    const t = run(d, 0, 10, 1);
    d.observe(beat(0, 11, t, 'beat', 'step_start'));
    for (let s = 11; s < 30; s++)
      d.observe({ rank: 0, step: s, ts: t + (s - 10), msg: 'step_end' }, 'output');
    d.observe(beat(0, 30, t + 20, 'beat', 'step_start'));
    expect(d.pastStalls()).toEqual([]);
  });

  it("the step's start printed with its heartbeat, read 1.5 s late: the SIGSTOP that followed is kept", () => {
    // the demo's `[debug] step 5:` line is the step's start (a beat of the output); on a loaded box it
    // was stamped 1.5 s after the heartbeat, inside the silence, and the recovered stall was lost
    const d = new StallDetector();
    const t = run(d, 0, 4, 1);
    d.observe(beat(0, 5, t, 'beat', 'step_start'));
    d.observe({ rank: 0, step: 5, ts: t + 1.5, msg: 'beat' }, 'output');
    d.observe(beat(0, 5, t + 20, 'progress'));
    d.observe({ rank: 0, step: 5, ts: t + 21.5, msg: 'step_end' }, 'output');
    expect(d.pastStalls()).toMatchObject([{ rank: 0, step: 5, where: 'in-step' }]);
    expect(d.pastStalls()[0]!.silenceS).toBeCloseTo(20, 5);
  });
});

describe('StallDetector: a stall that recovered is placed where the rank was, as the hang was', () => {
  // the demo on CI: stopped just after step 6's start heartbeat, before step 6's line (its output
  // last said step 5); after SIGCONT step 6's line came through the terminal at once while the
  // heartbeat file was read a poll later: for that moment the banner said "recovered … stalled at
  // step 5", where the HANG it replaced had said step 6
  const stopped = () => {
    const d = new StallDetector();
    const t = run(d, 0, 5, 1);
    for (let s = 1; s <= 5; s++) {
      d.observe({ rank: 0, step: s, ts: (s - 1) * 1.002 + 0.01, msg: 'beat' }, 'output');
      d.observe({ rank: 0, step: s, ts: s * 1.002 - 0.001, msg: 'step_end' }, 'output');
    }
    d.observe(beat(0, 6, t, 'beat', 'step_start'));
    return { d, t };
  };

  it('the output spoke again first: the stall is at step 6, in it, as the hang said', () => {
    const { d, t } = stopped();
    expect(d.stalls(t + 19)).toMatchObject([{ rank: 0, step: 6, where: 'in-step' }]);
    d.observe({ rank: 0, step: 6, ts: t + 20, msg: 'step_end' }, 'output');
    expect(d.stalls(t + 20.1)).toEqual([]);
    expect(d.pastStalls()).toMatchObject([{ rank: 0, step: 6, where: 'in-step' }]);
    // and once the heartbeats are read, the same stall, once
    d.observe(beat(0, 6, t + 20.001, 'progress'));
    expect(d.pastStalls()).toMatchObject([{ rank: 0, step: 6, where: 'in-step' }]);
    expect(d.pastStalls()).toHaveLength(1);
  });

  it('heartbeats that stopped long before (the file abandoned at step 2) never place a later stall', () => {
    const d = new StallDetector();
    let t = run(d, 0, 2, 1);
    for (let s = 3; s <= 8; s++) d.observe({ rank: 0, step: s, ts: t + (s - 3), msg: 'step_end' }, 'output');
    t += 5;
    d.observe({ rank: 0, step: 9, ts: t + 20, msg: 'step_end' }, 'output');
    expect(d.pastStalls()).toMatchObject([{ rank: 0, step: 9, where: 'in-step' }]);
  });
});

describe('StallDetector: record times at scale', () => {
  /**
   * rank 0 reports by heartbeats and by step lines; late in a long run its step lines stop for
   * 30 s while its heartbeats go on: no stall. The heartbeats in that silence are read from the
   * times the beat tracker keeps, which a rank with one source keeps few of: the rank with two
   * must keep more than 30 s of them, also among 300 ranks that speak by heartbeats alone.
   */
  it('a rank with two sources keeps enough times to see one speak through the other’s silence', () => {
    const d = new StallDetector();
    for (let r = 1; r < 300; r++) d.observe(beat(r, 0, 0, 'boot', 'start'));
    d.observe(beat(0, 0, 0, 'boot', 'start'));
    let t = 0;
    for (let s = 1; s <= 2000; s++) {
      const quiet = s > 1800 && s <= 1900; // 100 steps of 0.3 s: 30 s without a step line
      d.observe(beat(0, s, t + 0.001, 'beat', 'step_start'));
      for (let r = 1; r < 300; r += 37) d.observe(beat(r, s, t + 0.002, 'progress'));
      t += 0.3;
      d.observe(beat(0, s, t, 'progress'));
      d.observe(beat(0, s, t + 0.001, 'step_end', 'end'));
      if (!quiet) d.observe({ rank: 0, step: s, ts: t + 0.002, msg: 'step_end' }, 'output');
    }
    expect(d.pastStalls()).toEqual([]);
  });
});
