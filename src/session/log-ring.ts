import { boundLine } from './log-line.js';
import type { LogLine } from './state.js';

/**
 * The newest `capacity` log lines in a ring: a line costs O(1) however fast the run prints (an
 * array trimmed with splice moved every kept line on each new one past the cap). Each line is cut to
 * what a terminal can show as it enters (log-line.ts), so the ring's memory and every frame's
 * measuring are bounded whatever the trainer prints.
 */
export class LogRing {
  private readonly buf: LogLine[] = [];
  private start = 0;
  private cached: { n: number; lines: LogLine[] } | null = null;
  /** lines ever pushed */
  total = 0;

  constructor(private readonly capacity: number) {}

  push(text: string): void {
    this.total++;
    const line: LogLine = { id: this.total, ...boundLine(text) };
    if (this.buf.length < this.capacity) this.buf.push(line);
    else {
      this.buf[this.start] = line;
      this.start = (this.start + 1) % this.capacity;
    }
    this.cached = null;
  }

  /** the newest `n` lines, oldest first (the same array until a line arrives) */
  tail(n: number): LogLine[] {
    if (this.cached?.n === n) return this.cached.lines;
    const len = this.buf.length;
    const count = Math.min(n, len);
    const lines: LogLine[] = [];
    for (let i = len - count; i < len; i++) lines.push(this.buf[(this.start + i) % len]!);
    this.cached = { n, lines };
    return lines;
  }
}
