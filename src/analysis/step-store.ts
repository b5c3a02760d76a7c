/**
 * Per-rank step records in bounded memory. The newest WINDOW steps of each rank are kept exactly
 * (sources fill a step in over time and out of order: step lines, heartbeats, training.csv); older
 * steps are folded, in step order, into what the verdict needs of them: the last completed step,
 * step durations and toks/s as 0.1 %-wide log histograms (their medians), the slow-step candidates,
 * and the loss-explosion check with its window of the 20 losses before. A run that fits the window
 * (WINDOW steps per rank) is judged exactly as before; a longer one with medians good to 0.1 %.
 */

import { LogHistogram, quantileOf } from './log-histogram.js';
import type { SlowStep, StepRecord } from './step-stats.js';
import { EXPLOSION_FACTOR, median, round2, SLOW_FACTOR } from './step-stats.js';

/** steps kept exactly per rank (up to 8 ranks); folding starts at twice this */
export const WINDOW = 8192;
/**
 * steps kept exactly over all ranks: a rank's window shrinks as ranks are added (512 ranks keep 128
 * steps each), else a record of ~240 bytes per rank and step grew the engine by 1 GB at 512 ranks
 * before the first fold
 */
const ALL_RANKS_WINDOW = 8 * WINDOW;
/** the window never shrinks below this: the loss-explosion check and recent step times need it */
const MIN_WINDOW = 64;

/** the exact window of each rank when `ranks` ranks are recorded */
export function windowFor(ranks: number): number {
  return Math.max(MIN_WINDOW, Math.min(WINDOW, Math.floor(ALL_RANKS_WINDOW / Math.max(1, ranks))));
}
/** folded steps at least this × the running median are remembered as possible slow steps */
const CANDIDATE_FACTOR = 1.5;
const MAX_CANDIDATES = 20_000;
type LossExplosion = { step: number; loss: number; baseline: number };
/** where a step's time was taken (its end, or its start) */
type Mark = { step: number; ts: number };

/** One rank: its exact window and what was folded out of it. */
export class RankSteps {
  readonly recent = new Map<number, StepRecord>();
  /** folded: last step with a loss or an end; last started step − 1 */
  foldedDone = 0;
  foldedStarted = 0;
  private prevEnd: Mark | null = null;
  private prevStart: Mark | null = null;
  private readonly durations = new LogHistogram();
  private readonly beatDurations = new LogHistogram();
  private candidates: Array<{ step: number; seconds: number }> = [];
  private beatCandidates: Array<{ step: number; seconds: number }> = [];
  private readonly toks = new LogHistogram();
  private readonly lastLosses: number[] = [];
  private explosion: LossExplosion | null = null;

  /** the record of `step`, made when new; the window is windowFor(the number of ranks) */
  record(step: number, window = WINDOW): StepRecord {
    let r = this.recent.get(step);
    if (r === undefined) {
      r = {};
      this.recent.set(step, r);
      if (this.recent.size > 2 * window) this.fold(window);
    }
    return r;
  }

  /**
   * A new process took over this rank's heartbeat file (files are appended to across re-runs): what
   * the old one's heartbeats said is not this run. Only heartbeat values go; what the output and
   * the CSV table said stays (they are this run's).
   */
  forgetBeats(beatPri: number, beatEndPri: number): void {
    for (const [step, r] of this.recent) {
      if (r.lossPri === beatPri) {
        r.loss = undefined;
        r.lossPri = undefined;
      }
      if (r.toksPri === beatPri) {
        r.toksPerS = undefined;
        r.toksPri = undefined;
      }
      r.startTs = undefined;
      if (r.endPri === beatEndPri) {
        r.endTs = undefined;
        r.endPri = undefined;
      }
      if (r.loss === undefined && r.toksPerS === undefined) this.recent.delete(step);
    }
    this.prevEnd = null;
    this.prevStart = null;
  }

  /** the last completed step (a loss or an end), window and folded */
  done(): number {
    let max = this.foldedDone;
    for (const [step, r] of this.recent)
      if ((r.loss !== undefined || r.endTs !== undefined) && step > max) max = step;
    return max;
  }

  /** done(), or for a rank with only step_start beats the step before the last started one */
  completed(): number {
    let max = Math.max(this.foldedDone, this.foldedStarted);
    for (const [step, r] of this.recent) {
      if (r.loss !== undefined || r.endTs !== undefined) max = Math.max(max, step);
      else if (r.startTs !== undefined) max = Math.max(max, step - 1);
    }
    return max;
  }

  private fold(window: number): void {
    const folded = [...this.recent.entries()].sort((a, b) => a[0] - b[0]).slice(0, this.recent.size - window);
    for (const [step, r] of folded) {
      this.recent.delete(step);
      if (r.loss !== undefined || r.endTs !== undefined) this.foldedDone = Math.max(this.foldedDone, step);
      else if (r.startTs !== undefined) this.foldedStarted = Math.max(this.foldedStarted, step - 1);
      if (r.toksPerS !== undefined && Number.isFinite(r.toksPerS)) this.toks.add(r.toksPerS);
      // once a loss exploded, the losses after it are not needed
      if (r.loss !== undefined && Number.isFinite(r.loss))
        this.explosion ??= nextLoss(this.lastLosses, step, r.loss);
    }
    const d = durationsOf(folded, this.prevEnd, this.prevStart);
    this.prevEnd = d.prevEnd;
    this.prevStart = d.prevStart;
    keep(this.durations, this.candidates, d.progress);
    keep(this.beatDurations, this.beatCandidates, d.beat);
  }

  /**
   * The step durations the statistics use: from step ends (the trainer's own time, else arrivals
   * over the logging interval) where there are any, else from step starts.
   */
  private durationSet() {
    const sorted = [...this.recent.entries()].sort((a, b) => a[0] - b[0]);
    // the window's steps, continuing from the folded ones
    const w = durationsOf(sorted, this.prevEnd, this.prevStart);
    const useProgress = w.progress.length > 0 || this.durations.count > 0;
    return {
      exact: useProgress ? w.progress : w.beat,
      hist: useProgress ? this.durations : this.beatDurations,
      cand: useProgress ? this.candidates : this.beatCandidates,
    };
  }

  /** the median and 95th percentile step time in seconds; null before any step has a duration */
  stepTimes(): { median: number; p95: number } | null {
    const { exact, hist } = this.durationSet();
    const values = exact.map(([, d]) => d);
    const med = hist.count === 0 ? quantileOf(values, 0.5) : hist.quantile(0.5, values);
    const p95 = hist.count === 0 ? quantileOf(values, 0.95) : hist.quantile(0.95, values);
    return med === null || p95 === null ? null : { median: med, p95 };
  }

  /** slow steps (≥ SLOW_FACTOR × the rank's median step time) and how many there are */
  slow(rank: number): { steps: SlowStep[]; count: number } {
    const { exact, hist, cand } = this.durationSet();
    const values = exact.map(([, d]) => d);
    const med = hist.count === 0 ? median(values) : hist.quantile(0.5, values);
    if (med === null || med <= 0 || exact.length + hist.count < 3) return { steps: [], count: 0 };
    const out: SlowStep[] = [];
    const limit = SLOW_FACTOR * med;
    for (const c of cand) if (c.seconds >= limit) out.push(slowStep(rank, c.step, c.seconds, med));
    for (const [step, seconds] of exact) if (seconds >= limit) out.push(slowStep(rank, step, seconds, med));
    const windowSlow = out.length - cand.filter((c) => c.seconds >= limit).length;
    return { steps: out.sort((a, b) => a.step - b.step), count: hist.atLeast(limit) + windowSlow };
  }

  /** the median toks/s of the rank (null when it has none) */
  medianToks(): number | null {
    const exact: number[] = [];
    for (const r of this.recent.values())
      if (r.toksPerS !== undefined && Number.isFinite(r.toksPerS)) exact.push(r.toksPerS);
    return this.toks.count === 0 ? median(exact) : this.toks.quantile(0.5, exact);
  }

  /** the first step whose |loss| ≥ EXPLOSION_FACTOR × the median of the 20 finite losses before it */
  lossExplosion(): LossExplosion | null {
    if (this.explosion !== null) return this.explosion;
    const losses = [...this.lastLosses];
    const sorted = [...this.recent.entries()]
      .filter(([, r]) => r.loss !== undefined && Number.isFinite(r.loss))
      .sort((a, b) => a[0] - b[0]);
    for (const [step, r] of sorted) {
      const e = nextLoss(losses, step, r.loss!);
      if (e !== null) return e;
    }
    return null;
  }
}

/**
 * The next step's loss, after the (up to 20) losses before it, which it joins: an explosion when
 * its |loss| ≥ EXPLOSION_FACTOR × their median, else null.
 */
function nextLoss(before: number[], step: number, loss: number): LossExplosion | null {
  const baseline = before.length === 0 ? null : median(before.map(Math.abs))!;
  before.push(loss);
  if (before.length > 20) before.shift();
  if (baseline === null || Math.abs(loss) < EXPLOSION_FACTOR * Math.max(baseline, 1e-6)) return null;
  return { step, loss, baseline };
}

/**
 * A step's duration: the trainer's own measure where it prints one; else its end minus the previous
 * end, per step between them (log_every > 1), or minus its start.
 */
function durationOf(step: number, r: StepRecord, prevEnd: Mark | null): number | null {
  if (r.seconds !== undefined) return r.seconds;
  if (r.endTs === undefined) return null;
  if (prevEnd !== null && step > prevEnd.step) return (r.endTs - prevEnd.ts) / (step - prevEnd.step);
  return r.startTs === undefined ? null : r.endTs - r.startTs;
}

/**
 * The durations of steps (ascending), continuing from the step end and start before them: by
 * durationOf, and from one step's start to the next's; with the last end and start, to continue from.
 */
function durationsOf(records: Array<[number, StepRecord]>, prevEnd: Mark | null, prevStart: Mark | null) {
  const progress: Array<[number, number]> = [];
  const beat: Array<[number, number]> = [];
  for (const [step, r] of records) {
    const d = durationOf(step, r, prevEnd);
    if (d !== null) progress.push([step, d]);
    if (r.endTs !== undefined) prevEnd = { step, ts: r.endTs };
    if (prevStart !== null && r.startTs !== undefined && prevStart.step + 1 === step)
      beat.push([prevStart.step, r.startTs - prevStart.ts]);
    prevStart = r.startTs === undefined ? null : { step, ts: r.startTs };
  }
  return { progress, beat, prevEnd, prevStart };
}

/**
 * Fold a batch of durations into the histogram; those ≥ CANDIDATE_FACTOR × the median so far (this
 * batch included) stay listed, so that the slow steps among them can be named at the end.
 */
function keep(
  h: LogHistogram,
  cand: Array<{ step: number; seconds: number }>,
  batch: Array<[number, number]>,
): void {
  if (batch.length === 0) return;
  const med = h.quantile(
    0.5,
    batch.map(([, d]) => d),
  );
  for (const [step, d] of batch) {
    h.add(d);
    if (med !== null && d >= CANDIDATE_FACTOR * med && cand.length < MAX_CANDIDATES)
      cand.push({ step, seconds: d });
  }
}

function slowStep(rank: number, step: number, seconds: number, med: number): SlowStep {
  return { rank, step, seconds: round2(seconds), medianSeconds: round2(med) };
}
