/**
 * Per-rank stall detection from every source of progress (heartbeats; output lines and CSV rows with
 * their arrival times), with an injected clock (`nowS`), so the same code runs live, offline over a
 * folder, and in tests. Each source of a rank has its own tracker (progress-tracker.ts), so the
 * order in which sources are read does not matter; a rank is silent when every source of it is
 * silent past its own threshold, and it is localised by its richest source (heartbeats, then output,
 * then CSV).
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
import type { StepSource } from '../ingest/events.js';
import { type PastStall, type RecordedStall, reconcilePastStalls } from './past-stalls.js';
import {
  PHASE_MSGS,
  type ProgressRecord,
  ProgressTracker,
  progressPosition,
  TIMES_KEPT,
  type TrackerSettings,
} from './progress-tracker.js';
import { SOURCE_PREFERENCE, type StallInfo, type StallWhere } from './stall-types.js';

export type { PastStall } from './past-stalls.js';
export type { StallInfo, StallWhere } from './stall-types.js';

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
  stall: { step: number; where: StallWhere; silenceS: number } | null;
  memAllocMiB?: number;
  memReservedMiB?: number;
  pid?: number;
}

export type StallDetectorOptions = Partial<TrackerSettings>;

const MAX_PAST_STALLS = 1000;
/**
 * record times a tracker keeps while its rank has one source: no other source's silence can ask of
 * them, but a second source may start (a poll's worth, for records that come out of order)
 */
const ALONE_TIMES_KEPT = 64;
/** record times kept over all the ranks with several sources (each keeps 512 to TIMES_KEPT) */
const ALL_RANKS_TIMES_KEPT = 8 * TIMES_KEPT;
const MIN_TIMES_KEPT = 512;

export class StallDetector {
  private readonly settingsOf: TrackerSettings;
  private readonly ranks = new Map<number, Map<StepSource, ProgressTracker>>();
  private readonly past: RecordedStall[] = [];
  /**
   * when each rank's process started (its first record, or its latest boot). A collective's first
   * step cannot end before the last rank has started (rendezvous, init_process_group, the first
   * all_reduce), so the first-step allowance of every rank counts from the latest start: 256 ranks
   * started one by one on a loaded box kept rank 0 in step 1 past 60 s, and that is no hang.
   */
  private readonly started = new Map<number, number>();
  private latestStart: number | null = null;
  /** ranks heard from by more than one source */
  private readonly multiSource = new Set<number>();

  constructor(opts: StallDetectorOptions = {}) {
    this.settingsOf = {
      k: opts.k ?? 3,
      floorS: opts.floorS ?? 5,
      firstStepAllowanceS: opts.firstStepAllowanceS ?? 60,
      historySize: opts.historySize ?? 8,
    };
  }

  /** a record of one rank's progress from one source (a heartbeat: source `beat`) */
  observe(r: ProgressRecord, source: StepSource = 'beat'): void {
    let bySource = this.ranks.get(r.rank);
    let t = bySource?.get(source);
    if (t !== undefined && r.gpuMemAllocMiB !== undefined) t.memAllocMiB = r.gpuMemAllocMiB;
    if (!PHASE_MSGS.has(r.msg)) return; // watchdog_dump, loader records: not progress
    if (!this.started.has(r.rank) || r.msg === 'boot') {
      this.started.set(r.rank, r.ts);
      this.latestStart = Math.max(this.latestStart ?? r.ts, r.ts);
    }
    // a boot starts a new process (heartbeat files are appended to across re-runs): forget the old one
    if (t === undefined || r.msg === 'boot') {
      t = new ProgressTracker(this.settingsOf);
      if (bySource === undefined) {
        bySource = new Map();
        this.ranks.set(r.rank, bySource);
      }
      bySource.set(source, t);
      if (bySource.size > 1) this.multiSource.add(r.rank);
    }
    const ended = t.observe(r, progressPosition(r.step, r.msg, source !== 'beat'), this.timesKept(r.rank));
    if (ended !== null && this.past.length < MAX_PAST_STALLS)
      this.past.push({ rank: r.rank, source, ...ended });
  }

  /**
   * how many record times a rank's trackers keep: they are read only for another source's silence
   * (past-stalls.ts), so a rank with one source keeps a few, and the ranks with several share a
   * budget (at 512 ranks 4,096 times each were 70 KB a rank, for nothing)
   */
  private timesKept(rank: number): number {
    if (!this.multiSource.has(rank)) return ALONE_TIMES_KEPT;
    const share = Math.floor(ALL_RANKS_TIMES_KEPT / this.multiSource.size);
    return Math.max(MIN_TIMES_KEPT, Math.min(TIMES_KEPT, share));
  }

  check(nowS: number): RankStatus[] {
    return [...this.ranks.keys()]
      .sort((a, b) => a - b)
      .map((rank) => {
        const w = this.rankNow(rank, nowS)!;
        const t = w.tracker;
        const view: RankStatus = {
          rank,
          step: this.stepOf(rank),
          phase: t.phase,
          lastBeatAgeS: w.lastTs === null ? null : Math.max(0, nowS - w.lastTs),
          expectedS: t.expected(),
          thresholdS: w.thresholdS,
          gaps: [...t.gaps],
          stall:
            w.stalled && t.waiting !== null
              ? { step: t.waitingStep, where: t.waiting, silenceS: nowS - w.lastTs! }
              : null,
        };
        if (t.pid !== undefined) view.pid = t.pid;
        if (t.memAllocMiB !== undefined) view.memAllocMiB = t.memAllocMiB;
        if (t.memReservedMiB !== undefined) view.memReservedMiB = t.memReservedMiB;
        return view;
      });
  }

  /** Stalled ranks now, the most likely culprit first: lowest step, then earliest onset, then rank. */
  stalls(nowS: number): StallInfo[] {
    return [...this.ranks.keys()]
      .map((rank) => this.stallWithOnset(rank, nowS))
      .filter((st) => st !== null)
      .sort((a, b) => a.step - b.step || a.onset - b.onset || a.rank - b.rank)
      .map(({ onset: _onset, ...s }) => s);
  }

  /** whether any rank is stalled now (stops at the first: asked several times a second) */
  anyStall(nowS: number): boolean {
    for (const rank of this.ranks.keys()) if (this.stallWithOnset(rank, nowS) !== null) return true;
    return false;
  }

  /** one rank's stall now, or null: what stalls() says of it, without judging every other rank */
  stallOf(rank: number, nowS: number): StallInfo | null {
    const st = this.stallWithOnset(rank, nowS);
    if (st === null) return null;
    const { onset: _onset, ...s } = st;
    return s;
  }

  private stallWithOnset(rank: number, nowS: number): (StallInfo & { onset: number }) | null {
    if (!this.stalledNow(rank, nowS)) return null;
    const w = this.rankNow(rank, nowS);
    if (w === null || !w.stalled || w.tracker.waiting === null || w.lastTs === null) return null;
    return {
      rank,
      step: w.tracker.waitingStep,
      where: w.tracker.waiting,
      silenceS: nowS - w.lastTs,
      thresholdS: w.thresholdS!,
      onset: w.lastTs + w.thresholdS!,
    };
  }

  /**
   * Stalls that ended when records resumed, by when they were declared (then rank), once each
   * (past-stalls.ts says how the sources' silences are taken together)
   */
  pastStalls(): PastStall[] {
    return reconcilePastStalls(this.past, this.ranks, this.started);
  }

  /** the settings in force (for the verdict's record of how it was judged) */
  settings(): { k: number; floorS: number; firstStepS: number } {
    const s = this.settingsOf;
    return { k: s.k, floorS: s.floorS, firstStepS: s.firstStepAllowanceS };
  }

  /** Where a rank's records stop: the phase it waits in and its step (the runbook localisation). */
  position(rank: number): { step: number; where: StallWhere; lastTs: number } | null {
    const t = this.preferred(rank);
    if (t === undefined || t.waiting === null) return null;
    const lastTs = this.lastTsOf(rank);
    if (lastTs === null) return null;
    return { step: t.waitingStep, where: t.waiting, lastTs };
  }

  /** the rank's richest source (heartbeats, then output, then CSV) */
  private preferred(rank: number): ProgressTracker | undefined {
    const bySource = this.ranks.get(rank);
    for (const s of SOURCE_PREFERENCE) {
      const t = bySource?.get(s);
      if (t !== undefined && t.lastTs !== null) return t;
    }
    return undefined;
  }

  /** the furthest step any source of the rank reported */
  private stepOf(rank: number): number {
    let step = Number.NEGATIVE_INFINITY;
    for (const t of this.ranks.get(rank)?.values() ?? []) if (t.step > step) step = t.step;
    return step;
  }

  private lastTsOf(rank: number): number | null {
    let last: number | null = null;
    for (const t of this.ranks.get(rank)?.values() ?? [])
      if (t.lastTs !== null) last = Math.max(last ?? t.lastTs, t.lastTs);
    return last;
  }

  /** where a source's silence counts from: the first step's allowance from the last rank's start (see `started`) */
  private silentFrom(t: ProgressTracker, lastTs: number): number {
    return t.inFirstStep() ? Math.max(lastTs, this.latestStart ?? lastTs) : lastTs;
  }

  /**
   * rankNow's `stalled` alone, allocating nothing: whether any source waits and every one that does
   * is past its threshold. Asked of every rank several times a second (is any rank silent?), where
   * rankNow's answer object for each of 512 ranks was a megabyte of garbage a second.
   */
  private stalledNow(rank: number, nowS: number): boolean {
    const bySource = this.ranks.get(rank);
    if (bySource === undefined) return false;
    let waits = false;
    for (const t of bySource.values()) {
      if (t.lastTs === null || t.waiting === null) continue;
      if (nowS - this.silentFrom(t, t.lastTs) <= t.threshold()) return false;
      waits = true;
    }
    return waits;
  }

  /**
   * A rank now: silent when every source of it is past its own threshold. Its silence counts from
   * its newest record of any source; its threshold is when the last source to go silent did.
   */
  private rankNow(
    rank: number,
    nowS: number,
  ): { tracker: ProgressTracker; lastTs: number | null; thresholdS: number | null; stalled: boolean } | null {
    const bySource = this.ranks.get(rank);
    const tracker = this.preferred(rank) ?? bySource?.values().next().value;
    if (tracker === undefined) return null;
    const lastTs = this.lastTsOf(rank);
    let onset: number | null = null;
    for (const t of bySource!.values()) {
      if (t.lastTs === null || t.waiting === null) continue;
      const at = this.silentFrom(t, t.lastTs) + t.threshold();
      onset = Math.max(onset ?? at, at);
    }
    if (onset === null || lastTs === null) return { tracker, lastTs, thresholdS: null, stalled: false };
    return { tracker, lastTs, thresholdS: onset - lastTs, stalled: this.stalledNow(rank, nowS) };
  }
}
