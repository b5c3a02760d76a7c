/**
 * Trainer stdout/stderr (already split into lines) → typed events. Stateful because some records
 * span lines: Python tracebacks (per rank), the pretty-printed final metrics JSON, and torchrun's
 * ChildFailedError table. Ordinary text is a `log` event tagged `other`; `skippedLines` counts only
 * lines that looked like a structured record but could not be used.
 *
 * Hot path: most lines are step lines, `[tag]` banners or plain text, so dispatch is on the first
 * character before any regex runs.
 */
import { stripTerminalEscapes } from '../util/ansi.js';
import type { IngestEvent, LogLineEvent, StepEvent } from './events.js';
import { truncatedLine } from './line-splitter.js';
import { parsePythonJson } from './python-json.js';
import {
  type ParsedStep,
  parseNanoGpt,
  parseNsaStep,
  parsePythonDict,
  parseTorchtitan,
  parseWithPresetRegex,
  type StepParse,
} from './step-formats.js';
import { StepShapeLearner } from './step-shape-learner.js';
import { ROOT_CAUSE_HEADER, TracebackBuilder } from './traceback-parser.js';

// torchrun's per-rank prefixes: `[rankN]:` (--local-ranks-filter / log_line_prefix_template) and
// `[defaultN]:` (--tee / --redirects: role name + local rank, the rank on a single node); some
// versions add one space after the colon, others none
const RANK_PREFIX = /^\[(?:rank|default)(\d+)\]:(?: (?=\S))?/;
const TAG = /^\[([A-Za-z][\w-]*)\]/;
const DEBUG_STEP = /^\[debug\] step (\d+):/;
const GRAD_TRACE = /^\[GRAD-TRACE\] \S*?(\d*) arrived=\d+ missing=\d+/;
const MISSING_GRAD = /^\s*(?:- )?MISSING: \S+$/;
const TORCHRUN_FAILED = /failed \(exitcode: (-?\d+)\) local_rank: (\d+)/;
const METRICS_LINE = /^\s+"[^"]*": /;
const MAX_METRICS_LINES = 200;
const CONTROL_OR_ESC = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** `[tag]` → LogLineEvent tag. */
const TAGS: Record<string, string> = {
  boot: 'boot',
  'env-guard': 'boot',
  'env-policy': 'boot',
  override: 'boot',
  amp: 'boot',
  opt: 'boot',
  train: 'train',
  fwe: 'train',
  debug: 'debug',
  warn: 'warn',
  watch: 'warn',
  error: 'error',
  'GRAD-TRACE': 'grad-trace',
  DDP: 'ddp',
  ddp: 'ddp',
  'ddp-safe': 'ddp',
  trace: 'trace',
};

export interface StdoutParserOptions {
  /** a preset's step-line regex: named groups `step`, `loss`, optional `toks`, `lr` */
  stepRegex?: RegExp;
  /**
   * Output of `srun --label` (a Slurm run): each line starts with the task that printed it (`1: `),
   * one torchrun agent per task, so `[default0]:` is local rank 0 of that task's node; this gives
   * its global rank.
   */
  srunTasks?: { globalRank(task: number, localRank: number): number };
}

/** srun --label: the task id, right-aligned to the widest one, then `: ` */
const SRUN_LABEL = /^ *(\d+): /;
const TOKENS_PER_ITER = 'tokens per iteration will be: ';
/** with no step line recognised this long after the first line, say what the lines look like */
const UNRECOGNISED_AFTER_S = 60;

/** a step that carries its duration gets toks/s from the tokens each step takes */
function withToks(p: StepParse, tokensPerStep: number | undefined): StepParse {
  if (p === null || p === 'malformed' || tokensPerStep === undefined || !p.seconds) return p;
  return { ...p, toksPerS: Math.round((tokensPerStep / p.seconds) * 10) / 10 };
}

export class StdoutParser {
  private readonly stepRegex: RegExp | undefined;
  private readonly srunTasks: StdoutParserOptions['srunTasks'];
  /** the srun task of the line being handled (Slurm runs) */
  private task: number | undefined;
  /** active traceback per rank (-1: lines without a rank prefix) */
  private readonly tracebacks = new Map<number, TracebackBuilder>();
  private metricsLines: string[] | null = null;
  /** Hugging Face dict lines carry no step: the n-th training log dict is step n */
  private hfSteps = 0;
  private lastTag: string | null = null;
  /** nanoGPT's `tokens per iteration will be: N` (its step lines carry only the time) */
  private tokensPerIter: number | undefined;
  /**
   * Learns the step line of a trainer no format knows; gone once a known format (or the lane's
   * regex) read a step, so a known trainer's other lines cost nothing here.
   */
  private learner: StepShapeLearner | null;
  /** the current line's arrival time, where the caller knows it (a learned step keeps its own) */
  private lineTs: number | undefined;
  private firstTs: number | undefined;
  /** the note that no step line was recognised was given after the first minute */
  private toldUnrecognised = false;
  skippedLines = 0;

  constructor(opts: StdoutParserOptions = {}) {
    this.stepRegex = opts.stepRegex;
    this.srunTasks = opts.srunTasks;
    // with the lane's own regex nothing is adopted; the shapes are still counted for the note
    this.learner = new StepShapeLearner(opts.stepRegex === undefined);
  }

  /** a local rank as printed by the current line's torchrun agent → the global rank */
  private globalOf(local: number): number {
    return this.task === undefined || this.srunTasks === undefined
      ? local
      : this.srunTasks.globalRank(this.task, local);
  }

  /** tracebacks are kept per rank; lines of an agent itself (no rank) per task */
  private tbKey(rank: number | undefined): number {
    return rank ?? (this.task === undefined ? -1 : -2 - this.task);
  }

  push(rawLine: string, ts?: number): IngestEvent[] {
    const out: IngestEvent[] = [];
    this.lineTs = ts;
    if (ts !== undefined) this.firstTs ??= ts;
    if (truncatedLine(rawLine) !== null) {
      this.skippedLines++;
      return out;
    }
    // NUL or U+FFFD: bytes were lost or corrupted; fatal only for a structured record
    const corrupt = rawLine.indexOf('\u0000') >= 0 || rawLine.indexOf('\ufffd') >= 0;
    let line = CONTROL_OR_ESC.test(rawLine) ? stripTerminalEscapes(rawLine) : rawLine;
    let rank: number | undefined;
    this.task = undefined;
    if (this.srunTasks !== undefined) {
      const m = SRUN_LABEL.exec(line);
      if (m !== null) {
        this.task = Number(m[1]);
        line = line.slice(m[0].length);
      }
    }
    // torchrun's prefixes, nested on a current torch: `[default2]:[rank2]: ` (--tee around the
    // worker's own `[rankN]:`); `[rankN]` is global, `[defaultN]` the agent's local rank: the
    // innermost global one names the rank
    let global = false;
    while (line.charCodeAt(0) === 91 && (line.startsWith('[rank') || line.startsWith('[default'))) {
      const m = RANK_PREFIX.exec(line);
      if (m === null) break;
      if (line.startsWith('[rank')) {
        rank = Number(m[1]);
        global = true;
      } else if (!global) rank = this.globalOf(Number(m[1]));
      line = line.slice(m[0].length);
    }
    if (this.metricsLines !== null && this.feedMetrics(line, out)) return out;
    const key = this.tbKey(rank);
    const tb = this.tracebacks.get(key);
    if (tb !== undefined) {
      const r = tb.feed(line);
      if (r === 'more') return out;
      this.tracebacks.delete(key);
      out.push(tb.finish());
      if (r === 'done') return out;
    }
    if (corrupt && looksStructured(line)) {
      this.skippedLines++;
      return out;
    }
    this.dispatch(line, rank, out);
    return out;
  }

  flush(): IngestEvent[] {
    const out: IngestEvent[] = [];
    for (const tb of this.tracebacks.values()) out.push(tb.finish());
    this.tracebacks.clear();
    if (this.metricsLines !== null) {
      this.metricsLines = null;
      this.skippedLines++;
    }
    if (this.learner !== null) {
      const late = this.learner.finish();
      for (const { step, ts } of late) out.push(stepEvent(step, undefined, ts));
      if (late.length > 0) out.push({ kind: 'output-format', inferred: this.learner.inferred! });
      else if (this.learner.inferred === null)
        out.push({ kind: 'output-format', unrecognised: this.learner.summary() });
    }
    return out;
  }

  /**
   * A line no format read: the learner's, while no known format was seen. True when it was a step
   * (this line's, or the lines of the shape it got adopted: they keep their own arrival times).
   */
  private learn(line: string, rank: number | undefined, out: IngestEvent[]): boolean {
    const learner = this.learner!;
    const adopted = learner.inferred !== null;
    const steps = learner.observe(line, this.lineTs);
    for (const { step, ts } of steps) out.push(stepEvent(step, rank, ts));
    if (!adopted && learner.inferred !== null)
      out.push({ kind: 'output-format', inferred: learner.inferred });
    if (steps.length > 0) {
      this.lastTag = 'step';
      return true;
    }
    if (
      !this.toldUnrecognised &&
      learner.inferred === null &&
      this.lineTs !== undefined &&
      this.lineTs - this.firstTs! >= UNRECOGNISED_AFTER_S
    ) {
      this.toldUnrecognised = true;
      out.push({ kind: 'output-format', unrecognised: learner.summary() });
    }
    return false;
  }

  private dispatch(line: string, rank: number | undefined, out: IngestEvent[]): void {
    const c = line.charCodeAt(0);
    if (c === 115 /* s */ && line.startsWith('step ')) {
      if (this.emitStep(parseNsaStep(line), rank, out)) return;
    } else if (c === 91 /* [ */) {
      const name = TAG.exec(line)?.[1];
      if (name !== undefined && TAGS[name] !== undefined) {
        this.emitTagged(line, name, rank, out);
        return;
      }
    } else if (c === 84 /* T */ && line.startsWith('Traceback (most recent call last)')) {
      this.tracebacks.set(this.tbKey(rank), new TracebackBuilder(rank));
      return;
    } else if (c === 123 /* { */) {
      if (line.trimEnd() === '{') {
        this.metricsLines = ['{'];
        return;
      }
      if (this.emitHfDict(line, rank, out)) return;
    } else if (c === 105 /* i */ && line.startsWith('iter ')) {
      if (this.emitStep(withToks(parseNanoGpt(line), this.tokensPerIter), rank, out)) return;
    } else if (c === 82 /* R */ && line === ROOT_CAUSE_HEADER) {
      this.tracebacks.set(this.tbKey(rank), new TracebackBuilder(rank, true));
      return;
    }
    if (line.includes('step:') && line.includes('loss:')) {
      if (this.emitStep(parseTorchtitan(line), rank, out)) return;
    }
    if (
      this.stepRegex !== undefined &&
      this.emitStep(parseWithPresetRegex(line, this.stepRegex), rank, out)
    ) {
      return;
    }
    if (this.learner !== null && this.learn(line, rank, out)) return;
    const log: LogLineEvent = { kind: 'log', rank, tag: 'other', text: line };
    if (c === 116 /* t */ && line.startsWith(TOKENS_PER_ITER)) {
      const n = Number(line.slice(TOKENS_PER_ITER.length).replace(/,/g, ''));
      if (Number.isFinite(n) && n > 0) this.tokensPerIter = n;
    }
    if (line.startsWith('== ')) log.tag = 'capture';
    else if (MISSING_GRAD.test(line) && this.lastTag === 'grad-trace') log.tag = 'grad-trace';
    else if (c === 69 /* E */ || c === 87 /* W */) {
      const m = TORCHRUN_FAILED.exec(line);
      if (m !== null) {
        log.tag = 'torchrun';
        log.rank = this.globalOf(Number(m[2]));
      }
    }
    this.lastTag = log.tag;
    out.push(log);
  }

  /** true when the line was consumed (a step, or a malformed step counted as skipped) */
  private emitStep(p: StepParse, rank: number | undefined, out: IngestEvent[]): boolean {
    if (p === null) return false;
    if (p === 'malformed') {
      this.skippedLines++;
      return true;
    }
    out.push(stepEvent(p, rank));
    this.lastTag = 'step';
    // a known format: nothing left to learn (its lines of other shapes are not steps)
    this.learner = null;
    return true;
  }

  private emitTagged(line: string, name: string, rank: number | undefined, out: IngestEvent[]): void {
    let tag = TAGS[name] ?? 'other';
    let step: number | undefined;
    if (name === 'train' && line.startsWith('[train][FATAL]')) tag = 'fatal';
    else if (tag === 'debug') {
      const d = DEBUG_STEP.exec(line);
      if (d !== null) step = Number(d[1]);
    } else if (tag === 'grad-trace') {
      const g = GRAD_TRACE.exec(line);
      if (g === null) {
        this.skippedLines++;
        return;
      }
      if (g[1] !== '') step = Number(g[1]);
    }
    const log: LogLineEvent = { kind: 'log', rank, tag, text: line };
    if (step !== undefined) log.step = step;
    this.lastTag = tag;
    out.push(log);
  }

  private emitHfDict(line: string, rank: number | undefined, out: IngestEvent[]): boolean {
    if (!line.startsWith("{'")) return false;
    const d = parsePythonDict(line);
    if (d === null) {
      this.skippedLines++;
      return true;
    }
    if (typeof d.loss === 'number') {
      this.hfSteps++;
      this.learner = null;
      const ev: StepEvent = { kind: 'step', rank: rank ?? 0, step: this.hfSteps, loss: d.loss, format: 'hf' };
      if (typeof d.learning_rate === 'number') ev.lr = d.learning_rate;
      out.push(ev);
    } else if ('train_runtime' in d) {
      out.push({ kind: 'metrics', metrics: d });
    } else {
      out.push({ kind: 'log', rank, tag: 'other', text: line });
    }
    return true;
  }

  /** Inside the final metrics JSON. false: the line does not belong to it (re-dispatch it). */
  private feedMetrics(line: string, out: IngestEvent[]): boolean {
    const lines = this.metricsLines!;
    if (line.trimEnd() === '}') {
      lines.push('}');
      this.metricsLines = null;
      try {
        const metrics = parsePythonJson(lines.join('\n'));
        if (metrics !== null && typeof metrics === 'object' && !Array.isArray(metrics)) {
          out.push({ kind: 'metrics', metrics: metrics as Record<string, unknown> });
          return true;
        }
      } catch {
        // fall through: counted below
      }
      this.skippedLines++;
      return true;
    }
    if (METRICS_LINE.test(line) && lines.length < MAX_METRICS_LINES) {
      lines.push(line);
      return true;
    }
    // not the metrics JSON after all (a lone `{` in other output, or a cut-off write)
    this.metricsLines = null;
    this.skippedLines++;
    return false;
  }
}

function stepEvent(p: ParsedStep, rank: number | undefined, ts?: number): StepEvent {
  const ev: StepEvent = { kind: 'step', rank: rank ?? 0, step: p.step, loss: p.loss, format: p.format };
  if (ts !== undefined) ev.ts = ts;
  if (p.total !== undefined) ev.total = p.total;
  if (p.lr !== undefined) ev.lr = p.lr;
  if (p.toksPerS !== undefined) ev.toksPerS = p.toksPerS;
  if (p.seconds !== undefined) ev.seconds = p.seconds;
  return ev;
}

/** Would this line be a record (step line, tagged line, JSON, traceback) if it were intact? */
function looksStructured(line: string): boolean {
  const t = line.trimStart();
  return (
    t.startsWith('step ') ||
    t.startsWith('[') ||
    t.startsWith('{') ||
    t.startsWith('iter ') ||
    t.startsWith('Traceback') ||
    /^\s*"[^"]*": /.test(line)
  );
}
