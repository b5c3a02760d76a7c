/**
 * Per-rank stall detection from heartbeats, with an injected clock (`nowS`), so the same code runs
 * live, offline over a folder, and in tests.
 *
 * Each phase record (boot / beat / progress / step_end) tells what the rank is doing next, i.e. which
 * phase we are waiting in: boot → first step (`boot`), step_start → progress (`in-step`),
 * progress → step_end (`end-of-step`), step_end → next step_start (`rollover`). The detector learns
 * the intervals of each phase from the records seen and declares a stall when the silence exceeds
 * max(k × the phase's recent maximum, floorS). Localisation is the runbook's rule, which is simply
 * the phase being waited in. Without per-step `beat` records (NSA_HEARTBEAT_EVERY unset) the wait
 * after step_end is the next step's compute (progress → progress), reported as `in-step` of the
 * next step.
 *
 * Defaults: k = 3 (the same factor that makes a step "slow"; on the real H200 capture k = 4 would
 * miss the 20 s freeze inside a ~7 s step, 4 × 6.8 s > 26.4 s), floor 5 s (rollover and end-of-step
 * take milliseconds, so k × them means nothing), first step / boot allowance 60 s (warm-up and
 * compilation; nothing learned yet), history 8 intervals per phase.
 */
import type { BeatEvent } from '../ingest/events.js';

/** Which phase a silent rank is waiting in (the runbook localisation). */
export type StallWhere = 'boot' | 'in-step' | 'end-of-step' | 'rollover';

/** One rank as the detector sees it now. */
export interface RankStatus {
  rank: number;
  /** last step this rank reported in any heartbeat */
  step: number;
  /** phase of the last heartbeat: start | step_start | progress | end | ... */
  phase: string;
  /** seconds since this rank's last heartbeat (null before the first) */
  lastBeatAgeS: number | null;
  /** the interval the detector expects for the current phase */
  expectedS: number | null;
  /** silence after which the rank is suspect */
  thresholdS: number | null;
  /** recent gaps between beats, seconds, oldest first (for the sparkline) */
  gaps: number[];
  stall: { step: number; where: StallWhere; silenceS: number; cpuBusy: boolean | null } | null;
  memAllocMiB?: number;
  memReservedMiB?: number;
  pid?: number;
}

export interface StallDetectorOptions {
  k?: number;
  floorS?: number;
  firstStepAllowanceS?: number;
  historySize?: number;
}

export interface StallInfo {
  rank: number;
  step: number;
  where: StallWhere;
  silenceS: number;
  thresholdS: number;
  cpuBusy: boolean | null;
}

/** A stall that ended because records resumed (a freeze, SIGSTOP, a slow collective...). */
export interface PastStall extends StallInfo {
  /** epoch seconds when the silence crossed the threshold, and when records resumed */
  declaredTs: number;
  resumedTs: number;
}

const PHASE_MSGS = new Set(['boot', 'beat', 'progress', 'step_end']);
const GAP_HISTORY = 32;
const MAX_PAST_STALLS = 1000;

interface RankState {
  rank: number;
  pid: number | undefined;
  /** step of the last phase record */
  step: number;
  /** last record's phase label (phase, else msg) */
  phase: string;
  lastTs: number | null;
  waiting: StallWhere | null;
  /** the step the stall would be reported at */
  waitingStep: number;
  firstStep: number | null;
  sawBeat: boolean;
  history: Map<StallWhere, number[]>;
  /**
   * between steps: the longest interval ever seen per phase. Evals and checkpoints come back every
   * few hundred steps, long after the recent history forgot the last one.
   */
  longest: Map<StallWhere, number>;
  gaps: number[];
  memAllocMiB?: number;
  memReservedMiB?: number;
  cpuBusy: boolean | null;
}

export class StallDetector {
  private readonly k: number;
  private readonly floorS: number;
  private readonly firstStepAllowanceS: number;
  private readonly historySize: number;
  private readonly ranks = new Map<number, RankState>();
  private readonly cpu = new Map<number, boolean | null>();
  private readonly past: PastStall[] = [];

  constructor(opts: StallDetectorOptions = {}) {
    this.k = opts.k ?? 3;
    this.floorS = opts.floorS ?? 5;
    this.firstStepAllowanceS = opts.firstStepAllowanceS ?? 60;
    this.historySize = opts.historySize ?? 8;
  }

  observe(beat: BeatEvent): void {
    let st = this.ranks.get(beat.rank);
    if (beat.gpuMemAllocMiB !== undefined && st !== undefined) st.memAllocMiB = beat.gpuMemAllocMiB;
    if (!PHASE_MSGS.has(beat.msg)) return; // watchdog_dump, loader records: not progress
    // a boot starts a new process (heartbeat files are appended to across re-runs): forget the old one
    if (st === undefined || beat.msg === 'boot') {
      st = this.fresh(beat.rank, beat.pid);
      this.ranks.set(beat.rank, st);
    }
    if (st.lastTs !== null && st.waiting !== null) {
      const interval = beat.ts - st.lastTs;
      if (interval >= 0) {
        const threshold = this.thresholdOf(st);
        if (interval > threshold && this.past.length < MAX_PAST_STALLS) {
          this.past.push({
            rank: st.rank,
            step: st.waitingStep,
            where: st.waiting,
            silenceS: interval,
            thresholdS: threshold,
            cpuBusy: st.cpuBusy,
            declaredTs: st.lastTs + threshold,
            resumedTs: beat.ts,
          });
        }
        if (!this.inFirstStep(st)) this.learn(st, st.waiting, interval);
        st.gaps.push(interval);
        if (st.gaps.length > GAP_HISTORY) st.gaps.shift();
      }
    }
    if (beat.msg === 'beat') st.sawBeat = true;
    st.pid = beat.pid ?? st.pid;
    st.step = beat.step;
    st.phase = beat.phase ?? beat.msg;
    st.lastTs = beat.ts;
    if (beat.gpuMemAllocMiB !== undefined) st.memAllocMiB = beat.gpuMemAllocMiB;
    if (beat.gpuMemReservedMiB !== undefined) st.memReservedMiB = beat.gpuMemReservedMiB;
    switch (beat.msg) {
      case 'boot':
        st.waiting = 'boot';
        st.waitingStep = 0;
        break;
      case 'beat':
        st.waiting = 'in-step';
        st.waitingStep = beat.step;
        st.firstStep ??= beat.step;
        break;
      case 'progress':
        st.waiting = 'end-of-step';
        st.waitingStep = beat.step;
        st.firstStep ??= beat.step;
        break;
      default:
        // step_end: without per-step beats nothing marks the next step's start, so we wait in it
        st.waiting = st.sawBeat ? 'rollover' : 'in-step';
        st.waitingStep = st.sawBeat ? beat.step : beat.step + 1;
    }
  }

  /** Whether the rank's process burns CPU (from /proc or ps); null when unknown. */
  setCpuBusy(rank: number, busy: boolean | null): void {
    this.cpu.set(rank, busy);
    const st = this.ranks.get(rank);
    if (st !== undefined) st.cpuBusy = busy;
  }

  check(nowS: number): RankStatus[] {
    return [...this.ranks.values()]
      .sort((a, b) => a.rank - b.rank)
      .map((st) => {
        const age = st.lastTs === null ? null : Math.max(0, nowS - st.lastTs);
        const threshold = st.waiting === null ? null : this.thresholdOf(st);
        const hist = st.waiting === null ? undefined : st.history.get(st.waiting);
        const view: RankStatus = {
          rank: st.rank,
          step: st.step,
          phase: st.phase,
          lastBeatAgeS: age,
          expectedS: hist !== undefined && hist.length > 0 ? Math.max(...hist) : null,
          thresholdS: threshold,
          gaps: [...st.gaps],
          stall:
            age !== null && threshold !== null && age > threshold && st.waiting !== null
              ? { step: st.waitingStep, where: st.waiting, silenceS: age, cpuBusy: st.cpuBusy }
              : null,
        };
        if (st.pid !== undefined) view.pid = st.pid;
        if (st.memAllocMiB !== undefined) view.memAllocMiB = st.memAllocMiB;
        if (st.memReservedMiB !== undefined) view.memReservedMiB = st.memReservedMiB;
        return view;
      });
  }

  /** Stalled ranks now, the most likely culprit first: lowest step, then earliest onset, then rank. */
  stalls(nowS: number): StallInfo[] {
    const out: Array<StallInfo & { onset: number }> = [];
    for (const st of this.ranks.values()) {
      if (st.lastTs === null || st.waiting === null) continue;
      const threshold = this.thresholdOf(st);
      const silence = nowS - st.lastTs;
      if (silence <= threshold) continue;
      out.push({
        rank: st.rank,
        step: st.waitingStep,
        where: st.waiting,
        silenceS: silence,
        thresholdS: threshold,
        cpuBusy: st.cpuBusy,
        onset: st.lastTs + threshold,
      });
    }
    out.sort((a, b) => a.step - b.step || a.onset - b.onset || a.rank - b.rank);
    return out.map(({ onset: _onset, ...s }) => s);
  }

  /** Stalls that ended when records resumed, by when they were declared (then rank). */
  pastStalls(): PastStall[] {
    return [...this.past].sort((a, b) => a.declaredTs - b.declaredTs || a.rank - b.rank);
  }

  /** the settings in force (for the verdict's record of how it was judged) */
  settings(): { k: number; floorS: number; firstStepS: number } {
    return { k: this.k, floorS: this.floorS, firstStepS: this.firstStepAllowanceS };
  }

  /** Where a rank's records stop: the phase it waits in and its step (the runbook localisation). */
  position(rank: number): { step: number; where: StallWhere; lastTs: number } | null {
    const st = this.ranks.get(rank);
    if (st === undefined || st.waiting === null || st.lastTs === null) return null;
    return { step: st.waitingStep, where: st.waiting, lastTs: st.lastTs };
  }

  private fresh(rank: number, pid: number | undefined): RankState {
    return {
      rank,
      pid,
      step: 0,
      phase: '',
      lastTs: null,
      waiting: null,
      waitingStep: 0,
      firstStep: null,
      sawBeat: false,
      history: new Map(),
      longest: new Map(),
      gaps: [],
      cpuBusy: this.cpu.get(rank) ?? null,
    };
  }

  private inFirstStep(st: RankState): boolean {
    return st.waiting === 'boot' || st.firstStep === null || st.waitingStep <= st.firstStep;
  }

  private learn(st: RankState, where: StallWhere, interval: number): void {
    let h = st.history.get(where);
    if (h === undefined) {
      h = [];
      st.history.set(where, h);
    }
    h.push(interval);
    if (h.length > this.historySize) h.shift();
    if (where !== 'in-step') st.longest.set(where, Math.max(st.longest.get(where) ?? 0, interval));
  }

  private thresholdOf(st: RankState): number {
    const firstStepLimit = Math.max(this.floorS, this.firstStepAllowanceS);
    if (st.waiting === null || st.waiting === 'boot') return firstStepLimit;
    const hist = st.history.get(st.waiting);
    if (hist !== undefined && hist.length > 0) {
      let expected = Math.max(...hist, st.longest.get(st.waiting) ?? 0);
      // work between steps (CSV, TensorBoard, eval, checkpoints) can take as long as a step now and
      // then, so a between-steps phase is allowed at least what a step takes
      const steps = st.waiting === 'in-step' ? undefined : st.history.get('in-step');
      if (steps !== undefined && steps.length > 0) expected = Math.max(expected, ...steps);
      return Math.max(this.floorS, this.k * expected);
    }
    if (this.inFirstStep(st)) return firstStepLimit;
    // a phase never seen to finish yet (e.g. the first rollover): scale from what this rank has shown
    let longest = 0;
    for (const h of st.history.values()) for (const v of h) longest = Math.max(longest, v);
    return longest > 0 ? Math.max(this.floorS, this.k * longest) : firstStepLimit;
  }
}
