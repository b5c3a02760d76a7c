/**
 * What a person reads of a run besides its verdict: the loss and toks/s series, the step lines and
 * the last lines before it ended, the crash's traceback, the newest stack dump (of the rank a hang
 * names, on many ranks), the platform. One collector, fed by the run-folder reader as a view: the
 * live dashboard draws from it while the run goes, and the notebook cell and the report keep what
 * it says at the end (live, or `analyze` of the folder: the same reader, the same digest).
 */
import type { DumpEvent, IngestEvent, TracebackEvent } from '../ingest/events.js';
import { SOURCE_PRIORITY } from '../ingest/events.js';
import type { ReaderView } from '../ingest/reader-view.js';
import { Series, type SeriesPoint } from './chart-series.js';
import { type DumpView, toDumpView } from './dump-view.js';
import type { AnalysisResult } from './result.js';
import { StepCauses } from './step-causes.js';

/** points kept of each series in a digest (a chart of a whole run, not a step log) */
export const DIGEST_POINTS = 200;
const TAIL_LINES = 6;
/** a record's time, by the rank and step it is of */
type Mark = { rank: number; step: number; ts: number };
const MAX_TRACEBACKS = 16;

export interface RunExcerpts {
  /** the first and last step lines of the output */
  steps: string[];
  /** the last lines before it ended (before the stop's KeyboardInterrupt, when it was stopped) */
  tail: string[];
  /**
   * main-thread frames of the newest stack dump, innermost first ("file:line in function"): on a
   * hang, the newest of the rank it names (the one the others wait for, not a waiting one)
   */
  dumpTop: string[];
  dumpFile?: string;
  /** the crash's innermost frames and exception line */
  crash: string[];
  /** what slow steps were busy with, where the output said so: `{ "50": "evaluation" }` */
  causes?: Record<string, string>;
}

export interface RunDigest {
  series: {
    loss: Array<[number, number]>;
    toks: Array<[number, number]>;
    /** the step time in ms (ab-compare.ts reads it): absent in digests of older versions */
    stepMs?: Array<[number, number]>;
  };
  excerpts: RunExcerpts;
  platform: { gpu?: string; torch?: string; cuda?: string; python?: string };
}

/**
 * The order of dumps by when they were taken. A trainer's own signal dump is timed by the whole
 * second (nsa-vibe names it `stackdump_<second>.txt`, its header says the second): it counts as the
 * end of that second, so the stack hook's dump answering the same request (timed to the ms, within
 * that second) does not hide the trainer's own, which has the source lines.
 */
const dumpOrder = (path: string, d?: DumpEvent) => {
  const ts = d?.ts ?? 0;
  const at = d?.dumpKind === 'signal' && Number.isInteger(ts) ? ts + 0.999 : ts;
  return `${at.toFixed(3).padStart(16, '0')}\u0000${path.slice(path.lastIndexOf('/') + 1)}\u0000${path}`;
};

export class DigestCollector implements ReaderView {
  readonly loss = new Series();
  readonly toks = new Series();
  /**
   * step time in ms, the rate charted when the trainer prints no toks/s: its own printed time,
   * else the lowest rank's step lines' arrival times over the steps between them
   */
  readonly stepMs = new Series();
  private lastArrival: Mark | null = null;
  private lastBeat: Mark | null = null;
  /** the newest step any source has reported, and the last one completed */
  step = 0;
  done = 0;
  newestDump: DumpView | null = null;
  newestDumpName = '';
  private newestKey = '';
  /** every dump by its path, for the newest of one rank (the same events the evidence keeps) */
  private readonly dumps = new Map<string, DumpEvent>();
  private readonly stepLines: { head: string[]; tail: string[] } = { head: [], tail: [] };
  private readonly recent: string[] = [];
  /** the lines before the first traceback after the last step line, and whether it was a stop */
  private beforeTraceback: string[] | null = null;
  private stopped = false;
  private readonly tracebacks: Array<{ rank: number | undefined; exception: string; lines: string[] }> = [];
  private env: string | null = null;
  private readonly causes = new StepCauses();
  private envPath: string | null = null;

  outputLine(text: string): void {
    if (text.trim() === '') return;
    this.causes.line(text);
    // the first traceback after the last step line: what came before it is where the run was
    if (this.beforeTraceback === null && text.includes('Traceback (most recent call last):'))
      this.beforeTraceback = [...this.recent];
    this.recent.push(text);
    if (this.recent.length > TAIL_LINES) this.recent.shift();
  }

  event(e: IngestEvent, line?: string): void {
    if (e.kind === 'step') {
      this.causes.step(e.step);
      this.step = Math.max(this.step, e.step);
      this.done = Math.max(this.done, e.step);
      // the lowest rank's value, a step line's over a heartbeat's
      const pri = SOURCE_PRIORITY.output * 1e6 - e.rank;
      if (e.loss !== undefined) this.loss.set(e.step, e.loss, pri);
      if (e.toksPerS !== undefined) this.toks.set(e.step, e.toksPerS, pri);
      if (e.seconds !== undefined && e.seconds > 0) this.stepMs.set(e.step, e.seconds * 1000, pri);
      // else the arrivals' over the steps between (a lower priority: the trainer's own time stays)
      if (e.ts !== undefined)
        this.lastArrival = this.timePerStep(this.lastArrival, e.rank, e.step, e.ts, pri - 1);
      if (e.rank === 0 && line !== undefined) this.stepLine(line);
    } else if (e.kind === 'beat') {
      this.step = Math.max(this.step, e.step);
      if (e.msg === 'progress' && e.loss !== undefined) {
        const pri = SOURCE_PRIORITY.beat * 1e6 - e.rank;
        // a step's time from the trainer's own clock: progress heartbeats are written as each step
        // ends; finer than step lines' arrival, which a follower polling a file every 100 ms
        // quantises; below a time the trainer prints
        const beatPri = SOURCE_PRIORITY.output * 1e6 - e.rank - 0.5;
        this.lastBeat = this.timePerStep(this.lastBeat, e.rank, e.step, e.ts, beatPri);
        this.loss.set(e.step, e.loss, pri);
        this.done = Math.max(this.done, e.step);
        if (e.toksPerS !== undefined) this.toks.set(e.step, e.toksPerS, pri);
      }
    } else if (e.kind === 'traceback') {
      if (e.exception.endsWith('KeyboardInterrupt')) this.stopped = true;
      if (this.tracebacks.length < MAX_TRACEBACKS)
        this.tracebacks.push({ rank: e.rank, exception: e.exception, lines: tracebackLines(e) });
    }
  }

  dump(path: string, d: DumpEvent): void {
    this.dumps.set(d.file, d);
    if (this.newestKey === '' || dumpOrder(path, d) >= this.newestKey) {
      this.newestKey = dumpOrder(path, d);
      this.newestDumpName = path;
      this.newestDump = toDumpView(d);
    }
  }

  file(path: string, content: string): void {
    if (!path.endsWith('env.json') || (path !== 'env.json' && !path.endsWith('/env.json'))) return;
    // the run dir's own first, then the trainer's out_dir copy, then a host's (whatever came first)
    const rank = (p: string) => `${p.split('/').length}\u0000${p}`;
    if (this.envPath === null || rank(path) <= rank(this.envPath)) {
      this.envPath = path;
      this.env = content;
    }
  }

  /**
   * the step time since `last`, the lowest rank's previous record of one kind, over the steps
   * between them, charted at `pri`; the mark to keep is returned (this record, if its rank is as low)
   */
  private timePerStep(last: Mark | null, rank: number, step: number, ts: number, pri: number): Mark {
    if (last !== null && last.rank === rank && step > last.step && ts >= last.ts)
      this.stepMs.set(step, ((ts - last.ts) / (step - last.step)) * 1000, pri);
    return last === null || rank <= last.rank ? { rank, step, ts } : last;
  }

  /**
   * the charts' points (decimated past their cap) and how many steps each has seen; the rate chart
   * is toks/s where the trainer prints it, else the step time
   */
  chartSeries(): {
    loss: SeriesPoint[];
    toks: SeriesPoint[];
    lossTotal: number;
    toksTotal: number;
    rateLabel: 'toks/s' | 'ms/step';
  } {
    const byTime = this.toks.total === 0 && this.stepMs.total > 0;
    const rate = byTime ? this.stepMs : this.toks;
    return {
      loss: this.loss.points(),
      toks: rate.points(),
      lossTotal: this.loss.total,
      toksTotal: rate.total,
      rateLabel: byTime ? 'ms/step' : 'toks/s',
    };
  }

  /**
   * the digest at the end, from the verdict: its crash's traceback is the one excerpted, and its
   * hang's rank the one whose stack is (`dumps` says which rank wrote which dump)
   */
  digest(r: Pick<AnalysisResult, 'crash' | 'stall' | 'dumps' | 'slowSteps'>): RunDigest {
    const { crash } = r;
    const pairs = (s: Series) => downsample(s.points().map((p): [number, number] => [p.step, p.value]));
    const tb =
      this.tracebacks.find(
        (t) => crash !== null && t.exception === crash.exception && (t.rank ?? 0) === crash.rank,
      ) ?? this.tracebacks.find((t) => !/KeyboardInterrupt|ChildFailedError|SystemExit/.test(t.exception));
    const { head, tail } = this.stepLines;
    const steps = head.length + tail.length > 4 ? [...head, '...', ...tail.slice(-2)] : [...head, ...tail];
    const focus = r.stall ? this.newestOfRank(r.stall.rank, r.dumps) : null;
    const d = focus?.view ?? this.newestDump;
    const dumpFile = focus?.path ?? this.newestDumpName;
    const causes = this.causes.of(r.slowSteps.map((s) => s.step));
    return {
      series: { loss: pairs(this.loss), toks: pairs(this.toks), stepMs: pairs(this.stepMs) },
      excerpts: {
        steps,
        // a run stopped after a stall ends with the stop's KeyboardInterrupt, which says nothing
        // about where it hung; the lines before it do
        tail:
          this.stopped && this.beforeTraceback !== null
            ? this.beforeTraceback.slice(-TAIL_LINES)
            : [...this.recent],
        dumpTop:
          d === null
            ? []
            : d.mainThread
                .slice(0, 5)
                .map((f) => `${f.file}:${f.line} in ${f.function}${f.code ? `: ${f.code}` : ''}`),
        ...(d === null ? {} : { dumpFile }),
        crash: tb?.lines ?? [],
        ...(Object.keys(causes).length ? { causes } : {}),
      },
      platform: platformOf(this.env),
    };
  }

  /** the newest dump the given rank wrote, or null when none is known to be its */
  private newestOfRank(
    rank: number,
    reports: AnalysisResult['dumps'],
  ): { path: string; view: DumpView } | null {
    let best: { path: string; key: string; d: DumpEvent } | null = null;
    for (const rep of reports) {
      const d = rep.rank === rank ? this.dumps.get(rep.file) : undefined;
      if (d === undefined) continue;
      const key = dumpOrder(rep.file, d);
      if (best === null || key >= best.key) best = { path: rep.file, key, d };
    }
    return best && { path: best.path, view: toDumpView(best.d) };
  }

  private stepLine(line: string): void {
    // a new step line: the traceback before it (if any) was not where the run ended
    this.beforeTraceback = null;
    this.stopped = false;
    const { head, tail } = this.stepLines;
    if (head.length < 2) head.push(line);
    else {
      tail.push(line);
      if (tail.length > 3) tail.shift();
    }
  }
}

/**
 * Keep at most `max` points, evenly spaced by index, always keeping the first and last (the chart
 * must show where the run started and where it ended).
 */
export function downsample<T>(points: T[], max = DIGEST_POINTS): T[] {
  if (points.length <= max) return points;
  const out: T[] = [];
  for (let i = 0; i < max; i++) out.push(points[Math.round((i * (points.length - 1)) / (max - 1))]!);
  return out;
}

function tracebackLines(e: TracebackEvent): string[] {
  const inner = e.frames.slice(-3).map((f) => `  File "${f.file}", line ${f.line}, in ${f.function}`);
  return [...inner, `${e.exception}: ${e.message.split('\n')[0] ?? ''}`];
}

function platformOf(env: string | null): RunDigest['platform'] {
  if (env === null) return {};
  try {
    const o = JSON.parse(env) as Record<string, unknown>;
    const torch = typeof o.torch === 'string' ? o.torch : undefined;
    const cuda = torch === undefined ? null : /\+cu(\d+)(\d)$/.exec(torch);
    return {
      ...(typeof o.gpu_name === 'string' ? { gpu: o.gpu_name } : {}),
      ...(torch === undefined ? {} : { torch }),
      ...(cuda ? { cuda: `${cuda[1]}.${cuda[2]}` } : {}),
      ...(typeof o.python === 'string' ? { python: o.python.split(' ')[0] } : {}),
    };
  } catch {
    return {};
  }
}
