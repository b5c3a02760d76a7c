import type { AnalysisResult, EvidenceOptions } from '../analysis/evidence.js';
import { Evidence } from '../analysis/evidence.js';
import type { SettledStall } from '../analysis/rank-stacks.js';
import type { ManyRanks } from '../analysis/rank-table.js';
import { recoveredSummary } from '../analysis/recovered.js';
import { DigestCollector } from '../analysis/run-digest.js';
import type { CurrentSilence, SilentRank } from '../analysis/silences.js';
import type { BeatEvent } from '../ingest/events.js';
import { views } from '../ingest/reader-view.js';
import { heartbeatReadLagS, type RunLayout } from '../ingest/run-files.js';
import { RunFolderReader } from '../ingest/run-folder.js';
import { stripTerminalEscapes } from '../util/ansi.js';
import { LogRing } from './log-ring.js';
import type { RankView } from './state.js';

const MAX_LOG_LINES = 5000;

/**
 * One run's evidence as the dashboard shows it, updated chunk by chunk. The run folder's bytes go
 * through the same reader, Evidence and digest that `nsa-dbg analyze` reads the folder with, so
 * live and offline verdicts cannot disagree; this class keeps only what the dashboard needs besides
 * (the log ring, the ranks' pids, torch's memory, the trainer's clock). Plain data; the session
 * turns it into snapshots.
 */
export class LiveModel {
  /** the run's one evidence owner: its detector and judge are what every verdict reads */
  readonly evidence: Evidence;
  /**
   * the charts, excerpts, newest step and newest dump: what the dashboard draws, and what the
   * notebook keeps at the end
   */
  readonly digest = new DigestCollector();
  private readonly reader: RunFolderReader;
  readonly log = new LogRing(MAX_LOG_LINES);
  torchAllocMiB: number | undefined;
  torchReservedMiB: number | undefined;
  peakReservedMiB: number | undefined;
  /** trainer clock minus ours: remote boxes drift, and arrival time bounds the write time */
  private clockOffsetS: number | null = null;
  /** pid per rank from heartbeats */
  private readonly beatPids = new Map<number, number>();
  /** called with each output line as it is read (the teardown snapshot watches for its signs) */
  readonly lineWatchers = new Set<(text: string) => void>();
  /** the arrival time of the chunk being read */
  private nowMs = 0;

  /**
   * `layout`: how the run's folder is laid out, as its launcher recorded it. `probing` (default on):
   * a live session checks silent ranks on the box, so silence alone is only a suspicion; off, the
   * evidence is judged as `analyze` judges a folder (probing only if its probe file says so).
   * `timed`: the session writes the folder's clock (nsa-dbg-clock.jsonl) and hands its records over
   * before the chunks they time.
   */
  constructor(
    opts: {
      stepRegex?: string;
      layout?: RunLayout;
      probing?: boolean;
      timed?: boolean;
    } & EvidenceOptions = {},
  ) {
    this.evidence = new Evidence({
      detector: opts.detector,
      judge: opts.judge,
      nprocPerNode: opts.nprocPerNode ?? opts.layout?.nprocPerNode,
    });
    this.reader = new RunFolderReader(this.evidence, {
      layout: opts.layout ?? {},
      timed: opts.timed === true,
      ...(opts.stepRegex ? { stepRegex: new RegExp(opts.stepRegex) } : {}),
      view: views(
        {
          line: (text) => {
            const clean = stripTerminalEscapes(text);
            this.log.push(clean);
            for (const w of this.lineWatchers) w(clean);
          },
          event: (e) => {
            if (e.kind === 'beat') this.onBeat(e);
          },
        },
        this.digest,
      ),
    });
    // the session checks every silent rank on the box before calling it a hang
    if (opts.probing !== false) this.evidence.expectProbes();
  }

  /** bumped by every chunk ingested: a snapshot built at the same version can reuse the last one's data */
  version = 0;

  /**
   * a chunk of a file of the run folder (its path there), arrived at `nowMs`; `replace`: the file's
   * whole new content (a small file rewritten in place)
   */
  onFileChunk(path: string, chunk: Buffer, nowMs: number, replace = false): void {
    this.version++;
    this.nowMs = nowMs;
    if (replace) this.reader.replace(path, chunk);
    else this.reader.push(path, chunk);
  }

  private onBeat(b: BeatEvent): void {
    const offset = this.nowMs / 1000 - b.ts;
    this.clockOffsetS = this.clockOffsetS === null ? offset : Math.min(this.clockOffsetS, offset);
    if (b.pid && this.beatPids.get(b.rank) !== b.pid) {
      this.beatPids.set(b.rank, b.pid);
      this.beatPidsVersion++;
    }
    if (b.gpuMemAllocMiB !== undefined) this.torchAllocMiB = b.gpuMemAllocMiB;
    if (b.gpuMemReservedMiB !== undefined) {
      this.torchReservedMiB = b.gpuMemReservedMiB;
      this.peakReservedMiB = Math.max(this.peakReservedMiB ?? 0, b.gpuMemReservedMiB);
    }
  }

  /**
   * pid per rank (whom the stack sampler and the CPU checks ask): the stack hook's record is the
   * rank's own process and wins over a heartbeat's pid; its ranks are placed one pid one rank
   */
  get rankPids(): ReadonlyMap<number, number> {
    // asked once per rank per check and on every chunk: rebuilt only when a pid came or changed
    const rev = `${this.evidence.workersVersion}|${this.beatPidsVersion}`;
    if (this.pidsAt?.revision === rev) return this.pidsAt.pids;
    const pids = new Map(this.beatPids);
    for (const [rank, w] of this.evidence.workers()) pids.set(rank, w.pid);
    this.pidsAt = { revision: rev, pids, ranks: null };
    return pids;
  }

  /** the rank whose process `pid` is (of two, the later in rankPids' order, as a scan finds it) */
  rankOfPid(pid: number): number | undefined {
    const pids = this.rankPids;
    const at = this.pidsAt!;
    if (at.ranks === null) {
      at.ranks = new Map();
      for (const [r, p] of pids) at.ranks.set(p, r);
    }
    return at.ranks.get(pid);
  }

  /** moves when a rank's heartbeat pid is new or different */
  private beatPidsVersion = 0;
  private pidsAt: {
    revision: string;
    pids: ReadonlyMap<number, number>;
    ranks: Map<number, number> | null;
  } | null = null;

  /** the detector's clock: ours, shifted into the trainer's */
  trainerNowS(nowMs: number): number {
    return nowMs / 1000 - (this.clockOffsetS ?? 0);
  }

  /**
   * the clock silences are judged at: the trainer's, less how much later than a few ranks' a
   * many-rank run's heartbeats may be read (run-files.ts, heartbeatReadLagS); everything read so far
   * is settled into the evidence first
   */
  private judgedNowS(nowMs: number): number {
    this.reader.settle();
    return this.trainerNowS(nowMs) - heartbeatReadLagS(this.reader.heartbeatFiles);
  }

  /** silent ranks with what the checks found (suspect, busy, stuck, blocked-native) */
  silences(nowMs: number): CurrentSilence[] {
    return this.evidence.silences(this.judgedNowS(nowMs));
  }

  /**
   * whether any rank is silent now, without judging what its silence is: the questions asked
   * several times a second (check often? sample stragglers?) need no more, and judging every
   * silent rank for them took seconds of the engine's time while a hang of 512 ranks was concluded
   */
  anySilent(nowMs: number): boolean {
    return this.evidence.detector.anyStall(this.judgedNowS(nowMs));
  }

  /** silent ranks now, not judged (each one's judgement: silenceOf) */
  silentRanks(nowMs: number): SilentRank[] {
    return this.evidence.silentRanks(this.judgedNowS(nowMs));
  }

  /** one rank's silence now, judged as silences() judges it (null: not silent) */
  silenceOf(rank: number, nowMs: number): CurrentSilence | null {
    return this.evidence.silenceOf(rank, this.judgedNowS(nowMs));
  }

  ranks(nowMs: number): RankView[] {
    const nowS = this.judgedNowS(nowMs);
    const silent = new Map(this.evidence.silences(nowS).map((c) => [c.rank, c]));
    return this.evidence.detector.check(nowS).map((r) => {
      const c = silent.get(r.rank);
      if (r.stall === null || c === undefined) return { ...r, stall: null };
      const j = c.judgement;
      return {
        ...r,
        stall: {
          ...r.stall,
          cpuBusy: c.cpuBusy,
          hang: j === null || j.hang,
          ...(j === null ? {} : { state: j.state, why: j.why }),
        },
      };
    });
  }

  /** the per-rank table of a run with more than one rank */
  manyRanks(nowMs: number, ranks: RankView[]): ManyRanks {
    return this.evidence.manyRanks(this.judgedNowS(nowMs), ranks);
  }

  /**
   * the newest hang that recovered (its records resumed), in words; null when none did. Every
   * past silence is judged again for it, so once per version of the evidence, not once per frame.
   */
  recoveredLine(): string | null {
    this.reader.settle();
    if (this.recovered?.version !== this.version)
      this.recovered = { version: this.version, line: recoveredSummary(this.evidence.pastStalls()) };
    return this.recovered.line;
  }

  private recovered: { version: number; line: string | null } | null = null;

  /** a silence confirmed as a hang (stuck or blocked-native), or null */
  confirmedStall(nowMs: number): CurrentSilence | null {
    return this.evidence.headlineStall(this.judgedNowS(nowMs));
  }

  /** the silent ranks that wait for a culprit, as their stacks say now (none while none is told) */
  waitingForCulprit(nowMs: number): number[] {
    return this.evidence.waitingForCulprit(this.judgedNowS(nowMs));
  }

  /** a confirmed hang of many ranks with nothing more to learn: culprit and waiting ranks known */
  settledStall(nowMs: number): SettledStall | null {
    return this.evidence.settledStall(this.judgedNowS(nowMs));
  }

  /** the end of the run's files: partial lines and held output are read now */
  finish(): void {
    this.reader.end();
  }

  /**
   * The verdict. A run that has ended is judged at its last evidence, exactly as `analyze` judges
   * its folder; a live one at the trainer's now.
   */
  result(opts: {
    nowMs: number;
    processAlive: boolean;
    exitCode?: number | null;
    stopped?: boolean;
  }): AnalysisResult {
    this.reader.settle();
    const r = this.evidence.result({
      nowS: opts.processAlive ? this.judgedNowS(opts.nowMs) : undefined,
      processAlive: opts.processAlive,
      exitCode: opts.exitCode,
      stopped: opts.stopped,
    });
    return { ...r, digest: this.digest.digest(r) };
  }
}
