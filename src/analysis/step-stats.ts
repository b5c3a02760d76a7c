/**
 * Per-step numbers from every source, merged by (rank, step): loss and toks/s from step lines,
 * `progress` heartbeats and training.csv; start/end times from heartbeats. And the statistics the
 * verdict needs: step durations, slow steps, median throughput, a loss explosion.
 */

export interface StepRecord {
  loss?: number;
  /** the priority of the source the loss came from (events.ts SOURCE_PRIORITY) */
  lossPri?: number;
  toksPerS?: number;
  toksPri?: number;
  /** `beat` (step_start) time */
  startTs?: number;
  /** when the step ended: a `progress` heartbeat, else its output line's arrival */
  endTs?: number;
  endPri?: number;
  /** the step's duration as the trainer measured and printed it */
  seconds?: number;
}

export interface SlowStep {
  rank: number;
  step: number;
  seconds: number;
  medianSeconds: number;
}

/** A step is slow at ≥ SLOW_FACTOR × its rank's median step time. */
export const SLOW_FACTOR = 3;
/** A loss explosion: ≥ EXPLOSION_FACTOR × the median of the (up to 20) losses before it. */
export const EXPLOSION_FACTOR = 10;

/** keep the value of the highest-priority source; of one source, the first (order-independent) */
export function setLoss(r: StepRecord, v: number, pri: number): void {
  if (r.lossPri === undefined || pri > r.lossPri) {
    r.loss = v;
    r.lossPri = pri;
  }
}

export function setEnd(r: StepRecord, ts: number, pri: number): void {
  if (r.endPri === undefined || pri > r.endPri) {
    r.endTs = ts;
    r.endPri = pri;
  }
}

export function setToks(r: StepRecord, v: number, pri: number): void {
  if (r.toksPri === undefined || pri > r.toksPri) {
    r.toksPerS = v;
    r.toksPri = pri;
  }
}

export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const round2 = (v: number) => Math.round(v * 100) / 100;

/**
 * Seconds per step of one rank. With `progress` records: progress(k) − progress(prev) divided by the
 * steps between them (log_every > 1), and progress − step_start for the first. Ranks that only write
 * `beat` records: beat(k+1) − beat(k).
 */
export function stepDurations(steps: Map<number, StepRecord>): Map<number, number> {
  const out = new Map<number, number>();
  const sorted = [...steps.entries()].sort((a, b) => a[0] - b[0]);
  let prevEnd: { step: number; ts: number } | null = null;
  for (const [step, r] of sorted) {
    if (r.endTs === undefined) continue;
    if (prevEnd !== null && step > prevEnd.step)
      out.set(step, (r.endTs - prevEnd.ts) / (step - prevEnd.step));
    else if (r.startTs !== undefined) out.set(step, r.endTs - r.startTs);
    prevEnd = { step, ts: r.endTs };
  }
  if (out.size > 0) return out;
  for (let i = 0; i + 1 < sorted.length; i++) {
    const [step, r] = sorted[i]!;
    const [nextStep, next] = sorted[i + 1]!;
    if (r.startTs !== undefined && next.startTs !== undefined && nextStep === step + 1) {
      out.set(step, next.startTs - r.startTs);
    }
  }
  return out;
}

export function slowSteps(rank: number, steps: Map<number, StepRecord>): SlowStep[] {
  const durations = stepDurations(steps);
  const med = median([...durations.values()]);
  if (med === null || med <= 0 || durations.size < 3) return [];
  const out: SlowStep[] = [];
  for (const [step, seconds] of durations) {
    if (seconds >= SLOW_FACTOR * med)
      out.push({ rank, step, seconds: round2(seconds), medianSeconds: round2(med) });
  }
  return out.sort((a, b) => a.step - b.step);
}

export function firstLossExplosion(
  steps: Map<number, StepRecord>,
): { step: number; loss: number; baseline: number } | null {
  const losses = [...steps.entries()]
    .filter(([, r]) => r.loss !== undefined && Number.isFinite(r.loss))
    .sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < losses.length; i++) {
    const baseline = median(losses.slice(Math.max(0, i - 20), i).map(([, r]) => Math.abs(r.loss!)))!;
    const [step, r] = losses[i]!;
    if (Math.abs(r.loss!) >= EXPLOSION_FACTOR * Math.max(baseline, 1e-6))
      return { step, loss: r.loss!, baseline };
  }
  return null;
}
