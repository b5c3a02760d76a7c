/**
 * Per-step numbers from every source, merged by (rank, step): loss and toks/s from step lines,
 * `progress` heartbeats and training.csv; start/end times from heartbeats. And the factors of the
 * statistics the verdict needs (slow steps, a loss explosion), computed per rank in step-store.ts.
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

/** to two decimals, as the verdict's seconds are given */
export const round2 = (v: number) => Math.round(v * 100) / 100;

export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const s = values.slice();
  // a few values (a rank's recent step times, one median per rank a second at 512 ranks): sorted
  // in place, where a comparator sort's work arrays were most of the rank table's garbage
  if (s.length <= 16)
    for (let i = 1; i < s.length; i++) {
      const v = s[i]!;
      let j = i - 1;
      for (; j >= 0 && s[j]! > v; j--) s[j + 1] = s[j]!;
      s[j + 1] = v;
    }
  else s.sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
