/**
 * One output stream (stdout.log) parsed in order. Output of several torchrun agents carries each
 * agent's label (`srun --label`, a `--hosts` cell's merged output) and `[defaultN]:`, agent N's
 * local rank: its global rank is known once the node records place that agent. Until then its
 * lines wait here (everything after them too, so the order is kept), and go on as soon as the
 * records arrive: however the output and the records interleave, each line is read with the same
 * placement. The view gets every line at once.
 */
import type { IngestEvent } from './events.js';
import { isRedraw } from './line-splitter.js';
import type { NodeMap } from './node-map.js';
import { StdoutParser } from './stdout-parser.js';

/** lines held at most; past this the oldest are read with the usual layout (nprocPerNode per agent) */
const MAX_HELD = 20_000;
const AGENT_LOCAL_RANK = /^ *(\d+): \[default\d+\]:/;

export interface HeldOutputOptions {
  stepRegex?: RegExp;
  /** set when lines carry agent labels: where each agent's ranks are */
  nodes?: NodeMap;
  /** each line as it arrives */
  onLine(line: string): void;
  /** each line as it is parsed (in order), before its events */
  onParsed(line: string): void;
  /** `line`: the line being parsed (a traceback's event comes with the line after it) */
  onEvent(e: IngestEvent, line?: string): void;
  onSkipped(n: number): void;
}

export class HeldOutput {
  private readonly parser: StdoutParser;
  private readonly held: Array<{ line: string; ts: number | undefined }> = [];
  private head = 0;
  private counted = 0;

  constructor(private readonly o: HeldOutputOptions) {
    this.parser = new StdoutParser({ stepRegex: o.stepRegex, srunTasks: o.nodes });
  }

  /**
   * a line, with its arrival time where the folder keeps one; a redraw (isRedraw) is parsed for
   * progress but is no line of the log: a bar that redraws all day adds one line, when it ends
   */
  push(line: string, ts?: number): void {
    if (!isRedraw(line)) this.o.onLine(line);
    const item = { line, ts };
    if (this.held.length > this.head || this.waits(line)) {
      this.held.push(item);
      if (this.held.length - this.head > MAX_HELD) this.parse(this.held[this.head++]!);
      this.compact();
    } else this.parse(item);
  }

  /** node records arrived: read the held lines whose agent is now placed */
  release(): void {
    while (this.head < this.held.length && !this.waits(this.held[this.head]!.line))
      this.parse(this.held[this.head++]!);
    this.compact();
  }

  /** the end of the output: what is still held is read with the usual layout */
  end(): void {
    while (this.head < this.held.length) this.parse(this.held[this.head++]!);
    this.held.length = 0;
    this.head = 0;
    for (const e of this.parser.flush()) this.o.onEvent(e);
    this.syncSkipped();
  }

  private waits(line: string): boolean {
    if (this.o.nodes === undefined) return false;
    const m = AGENT_LOCAL_RANK.exec(line);
    return m !== null && !this.o.nodes.placesTask(Number(m[1]));
  }

  private parse({ line, ts }: { line: string; ts: number | undefined }): void {
    const redraw = isRedraw(line);
    if (!redraw) this.o.onParsed(line);
    for (const e of this.parser.push(line, ts)) {
      // a step learned late (step-shape-learner.ts) keeps the time of its own line
      if (ts !== undefined && (e.kind === 'step' || e.kind === 'log')) e.ts ??= ts;
      this.o.onEvent(e, redraw ? line.slice(1) : line);
    }
    this.syncSkipped();
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.held.length) {
      this.held.splice(0, this.head);
      this.head = 0;
    }
  }

  private syncSkipped(): void {
    const n = this.parser.skippedLines - this.counted;
    if (n > 0) this.o.onSkipped(n);
    this.counted = this.parser.skippedLines;
  }
}
