/**
 * One rank's progress as one source reports it (its heartbeats, or its output lines with their
 * arrival times, or its CSV rows): which phase the rank waits in now, and how long that phase may
 * take, learned from the intervals seen (stall-detector.ts has the rules and defaults).
 *
 * Each record tells what the rank is doing next, i.e. which phase we wait in: boot → first step
 * (`boot`), step start → its end (`in-step`), a step's end with more records to come for it
 * (`progress` → `step_end`: `end-of-step`), step_end → next step start (`rollover`). A source with
 * no step starts (output lines, CSV rows, heartbeats without per-step beats) waits in the next
 * step's compute after each step's end: `in-step` of the next step.
 */
import { RecordTimes } from './record-times.js';
import type { PastStall, StallWhere } from './stall-detector.js';

/** what one record says: the kinds of heartbeat records, or an output line mapped onto them */
export interface ProgressRecord {
  rank: number;
  step: number;
  ts: number;
  /** boot | beat (a step starts) | progress (a step's numbers) | step_end */
  msg: string;
  phase?: string;
  pid?: number;
  gpuMemAllocMiB?: number;
  gpuMemReservedMiB?: number;
}

export interface TrackerSettings {
  k: number;
  floorS: number;
  firstStepAllowanceS: number;
  historySize: number;
}

/**
 * a silence past the threshold that ended when records resumed (the detector adds the rank);
 * `firstStep`: it was the wait for the first step, which no rank ends before every rank started;
 * `fromPosition`: where the rank was by the record before it (progressPosition)
 */
export type EndedSilence = Omit<PastStall, 'rank'> & { firstStep: boolean; fromPosition: number };

/**
 * Where a record puts the rank in its own order of work, comparable across its sources: a step's
 * start, its numbers, its end (a boot before any step). A step line of the output or a CSV row is
 * the step's numbers, as the progress heartbeat written right after it is: a line that arrives
 * late is never ahead of that heartbeat.
 */
export function progressPosition(step: number, msg: string, stepLine: boolean): number {
  if (msg === 'boot') return step * 3 - 1;
  if (msg === 'beat') return step * 3;
  return msg === 'progress' || stepLine ? step * 3 + 1 : step * 3 + 2;
}

/**
 * the largest of `values` and `floor`, without spreading them into arguments: the threshold is
 * recomputed after every record of every rank (3,000 a second at 512 ranks), and the spreads
 * allocated about 2 MB a second of garbage there
 */
function maxOf(values: readonly number[], floor: number): number {
  let m = floor;
  // indexed: for…of allocated an iterator result per element here (seen in an allocation profile)
  for (let i = 0; i < values.length; i++) if (values[i]! > m) m = values[i]!;
  return m;
}

/** the records that move a tracker (records that are not progress only update memory) */
export const PHASE_MSGS = new Set(['boot', 'beat', 'progress', 'step_end']);
/** the phase each record starts the wait in (step_end's depends on whether steps have beats) */
const WAITS = new Map<string, StallWhere>([
  ['boot', 'boot'],
  ['beat', 'in-step'],
  ['progress', 'end-of-step'],
]);
const GAP_HISTORY = 32;
/** record times kept at most, to tell whether this source spoke during another's silence */
export const TIMES_KEPT = 4096;

export class ProgressTracker {
  pid: number | undefined;
  /** step of the last phase record */
  step = 0;
  /** last record's phase label (phase, else msg) */
  phase = '';
  lastTs: number | null = null;
  waiting: StallWhere | null = null;
  /** the step the stall would be reported at */
  waitingStep = 0;
  private firstStep: number | null = null;
  private sawBeat = false;
  private readonly history = new Map<StallWhere, number[]>();
  /**
   * between steps: the longest interval ever seen per phase. Evals and checkpoints come back every
   * few hundred steps, long after the recent history forgot the last one.
   */
  private readonly longest = new Map<StallWhere, number>();
  readonly gaps: number[] = [];
  memAllocMiB?: number;
  memReservedMiB?: number;
  /**
   * record times with their positions (progressPosition), the newest `timesKept` of them. An output
   * line timed by its arrival can come seconds late on a loaded box: a line of a step the other
   * source had already reported (the step's start, printed with its heartbeat) arriving during that
   * source's silence is not the rank moving on, so a silence asks which records put the rank past it
   */
  readonly times = new RecordTimes();
  /** threshold() until the next record */
  private thresholdMemo: number | null = null;
  /** where the last record put the rank (progressPosition) */
  lastPosition = Number.NEGATIVE_INFINITY;

  constructor(private readonly settings: TrackerSettings) {}

  /**
   * take a record at its position (progressPosition); returns the silence it ended when that
   * silence was past the threshold
   */
  observe(r: ProgressRecord, position: number, timesKept = TIMES_KEPT): EndedSilence | null {
    let ended: EndedSilence | null = null;
    if (this.lastTs !== null && this.waiting !== null) {
      // a record stamped before the one before it came with it: output timed by the arrival clock,
      // whose shift into the trainer's clock is learned from the heartbeats as they are read, so a
      // chunk read before the first one is stamped unshifted, later than the next chunk. Skipping it
      // left a source that had seen only such records with nothing learned, and the 60 s allowance
      // of a first step held its rank alive through a stall its heartbeats showed
      const interval = Math.max(0, r.ts - this.lastTs);
      // no threshold is below floorS: an interval within it ended no silence, and the threshold is
      // not worked out for it (thousands of records a second at 512 ranks, nearly all such)
      const threshold = interval > this.settings.floorS ? this.threshold() : Number.POSITIVE_INFINITY;
      if (interval > threshold)
        ended = {
          step: this.waitingStep,
          where: this.waiting,
          silenceS: interval,
          thresholdS: threshold,
          declaredTs: this.lastTs + threshold,
          resumedTs: r.ts,
          firstStep: this.inFirstStep(),
          fromPosition: this.lastPosition,
        };
      if (!this.inFirstStep()) this.learn(this.waiting, interval);
      this.gaps.push(interval);
      if (this.gaps.length > GAP_HISTORY) this.gaps.shift();
    }
    this.thresholdMemo = null;
    if (r.msg === 'beat') this.sawBeat = true;
    this.pid = r.pid ?? this.pid;
    this.step = r.step;
    this.phase = r.phase ?? r.msg;
    this.lastTs = r.ts;
    this.lastPosition = position;
    this.times.push(r.ts, position, timesKept);
    if (r.gpuMemAllocMiB !== undefined) this.memAllocMiB = r.gpuMemAllocMiB;
    if (r.gpuMemReservedMiB !== undefined) this.memReservedMiB = r.gpuMemReservedMiB;
    const waits = WAITS.get(r.msg);
    // step_end: without per-step beats nothing marks the next step's start, so we wait in it
    this.waiting = waits ?? (this.sawBeat ? 'rollover' : 'in-step');
    this.waitingStep = r.msg === 'boot' ? 0 : waits !== undefined || this.sawBeat ? r.step : r.step + 1;
    if (r.msg !== 'boot') this.firstStep ??= r.step;
    return ended;
  }

  /** the longest interval expected for the phase waited in now (null before any was learned) */
  expected(): number | null {
    const hist = this.waiting === null ? undefined : this.history.get(this.waiting);
    return hist !== undefined && hist.length > 0 ? maxOf(hist, Number.NEGATIVE_INFINITY) : null;
  }

  /**
   * The threshold changes only with a record (the phase waited in, the history learned), yet it is
   * asked for every rank and source each time silence is looked at: at 512 ranks it was the largest
   * single cost of the dashboard's snapshot, so it is kept until the next record.
   */
  threshold(): number {
    this.thresholdMemo ??= this.computeThreshold();
    return this.thresholdMemo;
  }

  private computeThreshold(): number {
    const { k, floorS, firstStepAllowanceS } = this.settings;
    const firstStepLimit = Math.max(floorS, firstStepAllowanceS);
    if (this.waiting === null || this.waiting === 'boot') return firstStepLimit;
    const hist = this.history.get(this.waiting);
    if (hist !== undefined && hist.length > 0) {
      let expected = maxOf(hist, this.longest.get(this.waiting) ?? 0);
      // work between steps (CSV, TensorBoard, eval, checkpoints) can take as long as a step now and
      // then, so a between-steps phase is allowed at least what a step takes
      const steps = this.waiting === 'in-step' ? undefined : this.history.get('in-step');
      if (steps !== undefined) expected = maxOf(steps, expected);
      return Math.max(floorS, k * expected);
    }
    if (this.inFirstStep()) return firstStepLimit;
    // a phase never seen to finish yet (e.g. the first rollover): scale from what this rank has shown
    let longest = 0;
    for (const h of this.history.values()) longest = maxOf(h, longest);
    return longest > 0 ? Math.max(floorS, k * longest) : firstStepLimit;
  }

  /** waiting to boot or in the first step: the waits that hold until every rank has started */
  inFirstStep(): boolean {
    return this.waiting === 'boot' || this.firstStep === null || this.waitingStep <= this.firstStep;
  }

  private learn(where: StallWhere, interval: number): void {
    let h = this.history.get(where);
    if (h === undefined) {
      h = [];
      this.history.set(where, h);
    }
    h.push(interval);
    if (h.length > this.settings.historySize) h.shift();
    if (where !== 'in-step') this.longest.set(where, Math.max(this.longest.get(where) ?? 0, interval));
  }
}
