/**
 * Trainer stdout/stderr (already split into lines) → typed events. Stateful because some records
 * span lines: Python tracebacks (per rank), the pretty-printed final metrics JSON, and torchrun's
 * ChildFailedError table. Ordinary text is a `log` event tagged `other`; `skippedLines` counts only
 * lines that looked like a structured record but could not be used.
 *
 * Hot path: most lines are step lines, `[tag]` banners or plain text, so dispatch is on the first
 * character before any regex runs (docs/trainer-formats.md has the table).
 */
import { stripTerminalEscapes } from '../util/ansi.js';
import { BarSteps } from './bar-steps.js';
import type { IngestEvent, LogLineEvent } from './events.js';
import { LinePrefixes, type SrunTasks } from './line-prefixes.js';
import { isRedraw, truncatedLine } from './line-splitter.js';
import { MetricsBlock } from './metrics-block.js';
import {
  type ParsedStep,
  parseNanoGpt,
  parseNsaStep,
  parsePythonDict,
  parseTorchtitan,
  parseWithLaneRegex,
  type StepParse,
  stepEvent,
  withTokensPerStep,
} from './step-formats.js';
import { StepShapeLearner } from './step-shape-learner.js';
import { knownTag, readTagged, untaggedLine } from './tagged-lines.js';
import { mayBeBar } from './tqdm-bar.js';
import { ROOT_CAUSE_HEADER, TracebackBuilder } from './traceback-parser.js';
import {
  parseDeepSpeedLog,
  parseDeepSpeedPipe,
  parseJsonLine,
  parseLitGpt,
  parseMegatron,
  parseMinGpt,
} from './trainer-formats.js';

const CONTROL_OR_ESC = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/** tqdm draws a bar below another (position > 0) and moves the cursor back up after it */
const CURSOR_UP = '\u001b[A';

export interface StdoutParserOptions {
  /** a lane's step-line regex: named groups `step`, `loss`, optional `toks`, `lr` */
  stepRegex?: RegExp;
  /** output of `srun --label` (a Slurm run): the global rank of a task's local rank */
  srunTasks?: SrunTasks;
}

const TOKENS_PER_ITER = 'tokens per iteration will be: ';
/** with no step line recognised this long after the first line, say what the lines look like */
const UNRECOGNISED_AFTER_S = 60;

export class StdoutParser {
  private readonly stepRegex: RegExp | undefined;
  /** the current line's srun task and rank */
  private readonly prefixes: LinePrefixes;
  /** active traceback per rank (-1: lines without a rank prefix) */
  private readonly tracebacks = new Map<number, TracebackBuilder>();
  /** inside the pretty-printed final metrics JSON */
  private metrics: MetricsBlock | null = null;
  /** tqdm bars, and the Hugging Face dicts that take their step from the bar */
  private readonly bars = new BarSteps();
  /** the line being handled is a bar drawn below another one */
  private nested = false;
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
    this.prefixes = new LinePrefixes(opts.srunTasks);
    // with the lane's own regex nothing is adopted; the shapes are still counted for the note
    this.learner = new StepShapeLearner(opts.stepRegex === undefined);
  }

  /** tracebacks are kept per rank; lines of an agent itself (no rank) per task */
  private tbKey(rank: number | undefined): number {
    const task = this.prefixes.task;
    return rank ?? (task === undefined ? -1 : -2 - task);
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
    if (isRedraw(rawLine)) {
      // a progress bar's redraw: progress or nothing, never a line of its own
      let text = rawLine.slice(1);
      this.nested = false;
      if (CONTROL_OR_ESC.test(text)) {
        this.nested = text.includes(CURSOR_UP);
        text = stripTerminalEscapes(text);
      }
      if (mayBeBar(text)) this.barSteps(text, undefined, out);
      return out;
    }
    const controls = CONTROL_OR_ESC.test(rawLine);
    this.nested = controls && rawLine.includes(CURSOR_UP);
    const line = this.prefixes.strip(controls ? stripTerminalEscapes(rawLine) : rawLine);
    const rank = this.prefixes.rank;
    if (this.metrics !== null && this.feedMetrics(line, out)) return out;
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
    this.pushSteps(this.bars.flush(), undefined, out);
    for (const tb of this.tracebacks.values()) out.push(tb.finish());
    this.tracebacks.clear();
    if (this.metrics !== null) {
      this.metrics = null;
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
    if (c === 115 /* s */) {
      if (line.startsWith('step ') && this.emitStep(parseNsaStep(line), rank, out)) return;
      if (line.startsWith('steps: ') && this.emitStep(parseDeepSpeedPipe(line), rank, out)) return;
    } else if (c === 91 /* [ */) {
      const name = knownTag(line);
      if (name !== undefined) {
        this.emitTagged(line, name, rank, out);
        return;
      }
      // DeepSpeed's logger: `[<date>] [INFO] [file:line:func] …`
      const d = line.charCodeAt(1);
      if (d >= 48 && d <= 57 && line.includes('step=') && this.emitStep(parseDeepSpeedLog(line), rank, out))
        return;
    } else if (c === 84 /* T */ && line.startsWith('Traceback (most recent call last)')) {
      this.tracebacks.set(this.tbKey(rank), new TracebackBuilder(rank));
      return;
    } else if (c === 123 /* { */) {
      if (line.trimEnd() === '{') {
        this.metrics = new MetricsBlock();
        return;
      }
      if (this.emitHfDict(line, rank, out)) return;
      if (line.startsWith('{"') && this.emitStep(parseJsonLine(line), rank, out)) return;
    } else if (c === 105 /* i */) {
      if (line.startsWith('iter ')) {
        if (this.emitStep(withTokensPerStep(parseNanoGpt(line), this.tokensPerIter), rank, out)) return;
      } else if (line.startsWith('iter_dt ') && this.emitStep(parseMinGpt(line), rank, out)) return;
    } else if (c === 32 /* space */) {
      if (line.includes('iteration ') && this.emitStep(parseMegatron(line), rank, out)) return;
    } else if (c === 69 /* E */ && line.startsWith('Epoch ') && line.includes(' | iter ')) {
      if (this.emitStep(parseLitGpt(line), rank, out)) return;
    } else if (c === 82 /* R */ && line === ROOT_CAUSE_HEADER) {
      this.tracebacks.set(this.tbKey(rank), new TracebackBuilder(rank, true));
      return;
    }
    if (line.includes('step:') && line.includes('loss:')) {
      if (this.emitStep(parseTorchtitan(line), rank, out)) return;
    }
    if (mayBeBar(line) && this.barSteps(line, rank, out)) return;
    if (this.stepRegex !== undefined && this.emitStep(parseWithLaneRegex(line, this.stepRegex), rank, out)) {
      return;
    }
    if (this.learner !== null && this.learn(line, rank, out)) return;
    const log: LogLineEvent = { kind: 'log', rank, tag: 'other', text: line };
    if (c === 116 /* t */ && line.startsWith(TOKENS_PER_ITER)) {
      const n = Number(line.slice(TOKENS_PER_ITER.length).replace(/,/g, ''));
      if (Number.isFinite(n) && n > 0) this.tokensPerIter = n;
    }
    const other = untaggedLine(line, c, this.lastTag);
    if (other !== null) {
      log.tag = other.tag;
      if (other.localRank !== undefined) log.rank = this.prefixes.globalOf(other.localRank);
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
    this.pushSteps([p], rank, out);
    this.lastTag = 'step';
    return true;
  }

  private emitTagged(line: string, name: string, rank: number | undefined, out: IngestEvent[]): void {
    const t = readTagged(line, name);
    if (t === 'malformed') {
      this.skippedLines++;
      return;
    }
    const log: LogLineEvent = { kind: 'log', rank, tag: t.tag, text: line };
    if (t.step !== undefined) log.step = t.step;
    this.lastTag = t.tag;
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
      this.learner = null;
      this.pushSteps(this.bars.hfDict(d), rank, out);
    } else if ('train_runtime' in d) {
      this.pushSteps(this.bars.flush(), rank, out);
      out.push({ kind: 'metrics', metrics: d });
    } else {
      out.push({ kind: 'log', rank, tag: 'other', text: line });
    }
    return true;
  }

  /** a bar's drawing (a line or a redraw): its steps; false when it is no bar */
  private barSteps(line: string, rank: number | undefined, out: IngestEvent[]): boolean {
    const steps = this.bars.bar(line, this.nested);
    if (steps === null) return false;
    this.pushSteps(steps, rank, out);
    this.lastTag = 'step';
    return true;
  }

  private pushSteps(steps: ParsedStep[], rank: number | undefined, out: IngestEvent[]): void {
    for (const p of steps) out.push(stepEvent(p, rank));
    // a known format: nothing left to learn (its lines of other shapes are not steps)
    if (steps.length > 0) this.learner = null;
  }

  /** Inside the final metrics JSON. false: the line does not belong to it (re-dispatch it). */
  private feedMetrics(line: string, out: IngestEvent[]): boolean {
    const r = this.metrics!.feed(line);
    if (r === 'more') return true;
    this.metrics = null;
    if (r === 'not-mine' || r === 'unreadable') this.skippedLines++;
    else out.push({ kind: 'metrics', metrics: r });
    return r !== 'not-mine';
  }
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
