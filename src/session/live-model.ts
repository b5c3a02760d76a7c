import type { AnalysisResult, EvidenceOptions } from '../analysis/evidence.js';
import { Evidence } from '../analysis/evidence.js';
import type { ManyRanks } from '../analysis/rank-table.js';
import type { CurrentSilence } from '../analysis/silences.js';
import type { StallDetector } from '../analysis/stall-detector.js';
import { userFrame } from '../analysis/user-frame.js';
import { HOST_FILES_READ_AT_TOP } from '../hosts/hosts.js';
import type { BeatEvent, DumpEvent, IngestEvent } from '../ingest/events.js';
import { HeartbeatReader } from '../ingest/heartbeat.js';
import { LineSplitter } from '../ingest/line-splitter.js';
import { PROBES_FILE, parseProbeLine } from '../ingest/probes.js';
import { DUMP_FILE, mainThreadTop, parseStackDump } from '../ingest/stackdump.js';
import { StdoutParser } from '../ingest/stdout-parser.js';
import { NODES_FILE } from '../slurm/node-map.js';
import { stripTerminalEscapes } from '../util/ansi.js';
import { LogRing } from './log-ring.js';
import { Series } from './series.js';
import type { DumpView, RankView, SeriesPoint } from './state.js';

const MAX_LOG_LINES = 5000;
/** dump files whose text is kept (to re-parse them as they grow); older ones are done */
const MAX_DUMP_TEXTS = 8;
/** a dump bigger than this is not a stack dump worth holding: its head is parsed, the rest dropped */
const MAX_DUMP_BYTES = 1 << 20;
/** small files whose whole content is evidence (re-read as they grow) */
const WHOLE_FILES = /^(\.HALT|\.anomaly_type|exit_code|metrics\.json|env\.json|mem_.*\.json)$/;

/** dumps sort by their own name (`stackdump_<second>.txt`), wherever in the cell they are */
const dumpOrder = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/**
 * Everything one run's evidence says, updated chunk by chunk: the same parsers and the same
 * Evidence/StallDetector that `nsa-dbg analyze` uses after the fact, so live and offline verdicts
 * cannot disagree. Plain data; the session turns it into snapshots.
 */
export class LiveModel {
  /** the run's one evidence owner: its detector and judge are what every verdict reads */
  readonly evidence: Evidence;
  private readonly stdoutSplit = new LineSplitter();
  private readonly probeSplit = new LineSplitter();
  private probeSkipped = 0;
  private readonly stdoutParser: StdoutParser;
  private readonly beats = new Map<string, HeartbeatReader>();
  private readonly wholeFiles = new Map<string, string>();
  /** the text of the newest dump files (insertion order: oldest first) */
  private readonly dumpTexts = new Map<string, string>();
  private readonly loss = new Series();
  /** the last step that finished (a step line or a progress beat with its loss) */
  private done = 0;
  private readonly toks = new Series();
  private skippedCounted = 0;
  readonly log = new LogRing(MAX_LOG_LINES);
  step = 0;
  dump: DumpView | null = null;
  newestDumpName = '';
  torchAllocMiB: number | undefined;
  torchReservedMiB: number | undefined;
  peakReservedMiB: number | undefined;
  /** trainer clock minus ours: remote boxes drift, and arrival time bounds the write time */
  private clockOffsetS: number | null = null;
  /** pid per rank, from heartbeats (for the CPU sampler) */
  readonly rankPids = new Map<number, number>();

  /** `srun`: stdout.log is a Slurm job's (`srun --label`, one torchrun agent per node) */
  constructor(opts: { stepRegex?: string; srun?: boolean } & EvidenceOptions = {}) {
    this.evidence = new Evidence({
      detector: opts.detector,
      judge: opts.judge,
      nprocPerNode: opts.nprocPerNode,
    });
    this.stdoutParser = new StdoutParser({
      ...(opts.stepRegex ? { stepRegex: new RegExp(opts.stepRegex) } : {}),
      ...(opts.srun ? { srunTasks: this.evidence.nodes } : {}),
    });
    // the session checks every silent rank on the box before calling it a hang
    this.evidence.expectProbes();
  }

  get detector(): StallDetector {
    return this.evidence.detector;
  }

  /** bumped by every chunk ingested: a snapshot built at the same version can reuse the last one's data */
  version = 0;

  onFileChunk(name: string, chunk: Buffer, nowMs: number): void {
    this.version++;
    const slash = name.lastIndexOf('/');
    if (slash >= 0) {
      this.onHostFile(name, name.slice(slash + 1), chunk, nowMs);
      return;
    }
    if (name === 'stdout.log') {
      for (const line of this.stdoutSplit.push(chunk)) this.onStdoutLine(line);
    } else if (/^heartbeat_rank\d+\.jsonl$/.test(name)) {
      let r = this.beats.get(name);
      if (!r) {
        r = new HeartbeatReader();
        this.beats.set(name, r);
      }
      for (const b of r.push(chunk)) this.onBeat(b, nowMs);
    } else if (DUMP_FILE.test(name)) {
      this.onDumpChunk(name, chunk);
    } else if (name === NODES_FILE) {
      this.evidence.nodes.push(chunk.toString('utf8'));
    } else if (name === PROBES_FILE) {
      for (const line of this.probeSplit.push(chunk)) this.onProbeLine(line);
    } else if (WHOLE_FILES.test(name)) {
      // handed to the evidence once complete (finish): a growing file must not count twice
      this.wholeFiles.set(name, (this.wholeFiles.get(name) ?? '') + chunk.toString('utf8'));
    }
    this.syncSkipped();
  }

  /** a dump file grew: re-parse it whole (it is named by its path in the cell: hosts' names repeat) */
  private onDumpChunk(name: string, chunk: Buffer): void {
    const before = this.dumpTexts.get(name) ?? '';
    const text = before.length >= MAX_DUMP_BYTES ? before : before + chunk.toString('utf8');
    this.dumpTexts.delete(name);
    this.dumpTexts.set(name, text);
    if (this.dumpTexts.size > MAX_DUMP_TEXTS) this.dumpTexts.delete(this.dumpTexts.keys().next().value!);
    const d = parseStackDump(text, name);
    if (d) this.evidence.addEvent(d);
    if (d && dumpOrder(name) >= dumpOrder(this.newestDumpName)) {
      this.newestDumpName = name;
      this.dump = toDumpView(d);
    }
  }

  /**
   * A file of one host of a `--hosts` run (`hosts/<alias>/<name>`): its heartbeats, dumps and
   * artifacts count like the run's own; its stdout and node records reach the model merged at the
   * top of the cell (src/hosts/hosts-follower.ts), and its exit status is that of one agent only.
   */
  private onHostFile(path: string, base: string, chunk: Buffer, nowMs: number): void {
    if (HOST_FILES_READ_AT_TOP.has(base)) return;
    // heartbeats are named by global rank: one host's never shadows another's
    if (/^heartbeat_rank\d+\.jsonl$/.test(base)) this.onFileChunk(base, chunk, nowMs);
    else if (DUMP_FILE.test(base)) this.onDumpChunk(path, chunk);
    else if (WHOLE_FILES.test(base))
      this.wholeFiles.set(path, (this.wholeFiles.get(path) ?? '') + chunk.toString('utf8'));
    this.syncSkipped();
  }

  private onProbeLine(line: string): void {
    if (line.trim() === '') return;
    const e = parseProbeLine(line);
    if (e === null) this.probeSkipped++;
    else this.evidence.addEvent(e);
  }

  private onStdoutLine(line: string): void {
    this.log.push(stripTerminalEscapes(line));
    for (const e of this.stdoutParser.push(line)) this.onEvent(e);
  }

  private onEvent(e: IngestEvent): void {
    this.evidence.addEvent(e);
    if (e.kind === 'step') {
      this.step = Math.max(this.step, e.step);
      // a step line wins over a heartbeat's value for the same step
      this.loss.set(e.step, e.loss, true);
      this.done = Math.max(this.done, e.step);
      if (e.toksPerS !== undefined) this.toks.set(e.step, e.toksPerS, true);
    }
  }

  private onBeat(b: BeatEvent, nowMs: number): void {
    const offset = nowMs / 1000 - b.ts;
    this.clockOffsetS = this.clockOffsetS === null ? offset : Math.min(this.clockOffsetS, offset);
    this.evidence.addEvent(b);
    if (b.pid) this.rankPids.set(b.rank, b.pid);
    this.step = Math.max(this.step, b.step);
    if (b.msg === 'progress' && b.loss !== undefined) {
      this.loss.set(b.step, b.loss, false);
      this.done = Math.max(this.done, b.step);
      if (b.toksPerS !== undefined) this.toks.set(b.step, b.toksPerS, false);
    }
    if (b.gpuMemAllocMiB !== undefined) this.torchAllocMiB = b.gpuMemAllocMiB;
    if (b.gpuMemReservedMiB !== undefined) {
      this.torchReservedMiB = b.gpuMemReservedMiB;
      this.peakReservedMiB = Math.max(this.peakReservedMiB ?? 0, b.gpuMemReservedMiB);
    }
  }

  private syncSkipped(): void {
    let n = this.stdoutParser.skippedLines + this.probeSkipped;
    for (const r of this.beats.values()) n += r.skippedLines;
    if (n > this.skippedCounted) {
      this.evidence.addSkipped(n - this.skippedCounted);
      this.skippedCounted = n;
    }
  }

  /** the detector's clock: ours, shifted into the trainer's */
  trainerNowS(nowMs: number): number {
    return nowMs / 1000 - (this.clockOffsetS ?? 0);
  }

  /** silent ranks with what the checks found (suspect, busy, stuck, blocked-native) */
  silences(nowMs: number): CurrentSilence[] {
    return this.evidence.silences(this.trainerNowS(nowMs));
  }

  ranks(nowMs: number): RankView[] {
    const nowS = this.trainerNowS(nowMs);
    const silent = new Map(this.evidence.silences(nowS).map((c) => [c.rank, c]));
    return this.detector.check(nowS).map((r) => {
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

  /** the per-rank table of a run with more than one rank (null with one) */
  manyRanks(nowMs: number, ranks: RankView[]): ManyRanks | null {
    if (ranks.length < 2) return null;
    return this.evidence.manyRanks(this.trainerNowS(nowMs), ranks);
  }

  /** a silence confirmed as a hang (stuck or blocked-native), or null */
  confirmedStall(nowMs: number): CurrentSilence | null {
    return this.silences(nowMs).find((c) => c.judgement === null || c.judgement.hang) ?? null;
  }

  stepsDone(): number {
    return this.done;
  }

  /** the charts' points (decimated past MAX) and how many steps each has seen */
  series(): { loss: SeriesPoint[]; toks: SeriesPoint[]; lossTotal: number; toksTotal: number } {
    return {
      loss: this.loss.points(),
      toks: this.toks.points(),
      lossTotal: this.loss.total,
      toksTotal: this.toks.total,
    };
  }

  /** flush partial lines at the end of the run and hand over the files that are now complete */
  finish(): void {
    for (const line of this.stdoutSplit.flush()) this.onStdoutLine(line);
    for (const e of this.stdoutParser.flush()) this.onEvent(e);
    for (const line of this.probeSplit.flush()) this.onProbeLine(line);
    // in the order `analyze` reads them: the cell's own files, then each host's (by path)
    const order = (n: string) => `${n.includes('/') ? 1 : 0}${n}`;
    const whole = [...this.wholeFiles].sort(([a], [b]) => (order(a) < order(b) ? -1 : 1));
    for (const [name, text] of whole) this.evidence.noteFile(name, text);
    this.syncSkipped();
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
    return this.evidence.result({
      nowS: opts.processAlive ? this.trainerNowS(opts.nowMs) : undefined,
      processAlive: opts.processAlive,
      exitCode: opts.exitCode,
      stopped: opts.stopped,
    });
  }
}

function toDumpView(d: DumpEvent): DumpView {
  const main = d.threads.find((t) => t.name === 'MainThread') ?? d.threads[0];
  const top = mainThreadTop(d);
  let frames = main ? [...main.frames].reverse() : [];
  // start at the interrupted frame, not inside the dump handler itself
  if (top) {
    const i = frames.findIndex(
      (f) => f.file === top.file && f.line === top.line && f.function === top.function,
    );
    if (i > 0) frames = frames.slice(i);
  }
  const user = userFrame([...frames].reverse());
  const userIdx = user ? frames.indexOf(user) : -1;
  return {
    file: d.file,
    kind: d.dumpKind,
    signal: d.signal,
    mainThread: frames,
    ...(userIdx > 0 ? { userFrame: userIdx } : {}),
    otherThreads: d.threads
      .filter((t) => t !== main)
      .map((t) => ({ name: t.name, top: t.frames[t.frames.length - 1] })),
  };
}
