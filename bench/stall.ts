/**
 * Stall detection on a 1,000-step jittery run with eval (every 100 steps, 2–3 s) and checkpoint
 * (every 250 steps, 6–8 s) pauses between steps, fed to the live StallDetector on a simulated
 * clock (heartbeat records as nsa-vibe writes them: step_start beat, progress, step_end). Checked
 * every 50 ms of run time: a suspicion during the healthy run is a false stall; after step 1,000 a
 * step starts and never ends, and the time from its heartbeat to the suspicion is the detection
 * time. nsa-vibe's own in-process watchdog fires after 180 s of silence.
 */

import { StallDetector } from '../src/analysis/stall-detector.js';
import type { BeatEvent } from '../src/ingest/events.js';

export interface StallResult {
  stallDetectSeconds: number;
  stallDetectTargetSeconds: number;
  falseStalls: number;
  p95StepSeconds: number;
  steps: number;
  inProcessWatchdogSeconds: number;
}

const STEPS = 1000;
const TICK_S = 0.05;

export function measureStall(seed = 7): StallResult {
  let x = seed;
  const rnd = () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
  const beats: BeatEvent[] = [];
  const durations: number[] = [];
  let t = 1_795_315_473;
  const beat = (step: number, msg: string, phase: string) =>
    beats.push({ kind: 'beat', ts: t, rank: 0, step, msg, phase, pid: 4162 } as BeatEvent);
  beat(0, 'boot', 'start');
  t += 20; // start-up and compilation
  for (let step = 1; step <= STEPS; step++) {
    beat(step, 'beat', 'step_start');
    // 0.25 s steps, ±30 % jitter, one in 50 twice as long
    const d = 0.25 * (0.7 + 0.6 * rnd()) * (rnd() < 0.02 ? 2 : 1);
    durations.push(d);
    t += d;
    beat(step, 'progress', 'progress');
    t += 0.002;
    beat(step, 'step_end', 'end');
    t += 0.003;
    if (step % 100 === 0) t += 2 + rnd(); // eval
    if (step % 250 === 0) t += 6 + 2 * rnd(); // checkpoint
  }
  beat(STEPS + 1, 'beat', 'step_start');
  const hangTs = t;

  const det = new StallDetector();
  let falseStalls = 0;
  let inStall = false;
  let i = 0;
  let detectS = Number.NaN;
  for (let now = beats[0]!.ts; now < hangTs + 600; now += TICK_S) {
    while (i < beats.length && beats[i]!.ts <= now) det.observe(beats[i++]!);
    const stalled = det.stalls(now).length > 0;
    if (i < beats.length) {
      if (stalled && !inStall) falseStalls++;
      inStall = stalled;
    } else if (stalled) {
      detectS = now - hangTs;
      break;
    }
  }
  const sorted = [...durations].sort((a, b) => a - b);
  const p95 = sorted[Math.ceil(sorted.length * 0.95) - 1]!;
  return {
    stallDetectSeconds: detectS,
    stallDetectTargetSeconds: Math.max(3 * p95, 5) + 1,
    falseStalls,
    p95StepSeconds: p95,
    steps: STEPS,
    inProcessWatchdogSeconds: 180,
  };
}
