/**
 * Sends Ink's frames to the terminal the way htop does: only the cells that changed since the last
 * frame, each run placed with an absolute cursor position. Ink 6.8 redraws every line of a frame
 * (or, in its incremental mode, moves the cursor relatively, which left ghost lines in tmux); a
 * dashboard left open for days must cost a few bytes a second while nothing changes (the clock,
 * an age counter) and no screenful per update.
 *
 * The writer owns the whole screen (the alternate screen, cursor hidden) and never scrolls it: no
 * newline is ever written. A line it cannot split into single-width cells is redrawn whole after
 * erasing it. A size change, or the first frame, repaints everything after clearing the screen.
 */
import { type CellLine, parseLine, sgrOf } from './frame-cells.js';

export interface FrameTarget {
  write(s: string): unknown;
  readonly columns?: number;
  readonly rows?: number;
}

const CLEAR = '\x1b[H\x1b[2J';
const HIDE_CURSOR = '\x1b[?25l';
const RESET = '\x1b[0m';
const ERASE_LINE = '\x1b[2K';
const ERASE_TO_END = '\x1b[K';
/** synchronized output: a multi-line update appears at once, not line by line */
const BEGIN_SYNC = '\x1b[?2026h';
const END_SYNC = '\x1b[?2026l';

const EMPTY = parseLine('');

const cup = (row: number, col: number) => `\x1b[${row + 1};${col + 1}H`;

/** The cells `from` (inclusive) to `to` (exclusive) of a line, with their styles, ending plain. */
function span(line: CellLine, from: number, to: number): string {
  let out = '';
  // every update ends plain, so a span starts plain
  let cur = '';
  for (let i = from; i < to; i++) {
    const st = line.styles[i]!;
    if (st !== cur) {
      out += sgrOf(st);
      cur = st;
    }
    out += line.chars[i];
  }
  return cur === '' ? out : `${out}\x1b[0m`;
}

const same = (a: CellLine, b: CellLine, i: number) =>
  a.chars[i] === b.chars[i] && a.styles[i] === b.styles[i];

/** What turns row `row` from `prev` (what the screen shows) into `next`; '' when nothing changed. */
export function lineUpdate(row: number, prev: CellLine = EMPTY, next: CellLine | undefined): string {
  if (next === undefined) return prev.raw === '' ? '' : cup(row, 0) + ERASE_LINE;
  if (prev.raw === next.raw) return '';
  if (prev.complex || next.complex) return `${cup(row, 0)}${ERASE_LINE}${next.raw}\x1b[0m`;
  const n = next.chars.length;
  const m = prev.chars.length;
  let a = 0;
  while (a < n && a < m && same(prev, next, a)) a++;
  if (a === n && a === m) return '';
  let out = cup(row, a);
  if (n >= m) {
    // same length or longer: up to the last differing cell (beyond the old end all is blank)
    let z = n;
    if (n === m) while (z > a && same(prev, next, z - 1)) z--;
    out += span(next, a, z);
  } else {
    out += span(next, a, n) + ERASE_TO_END;
  }
  return out;
}

function fitTo(line: CellLine, cols: number): CellLine {
  if (line.complex || line.chars.length <= cols) return line;
  return { ...line, chars: line.chars.slice(0, cols), styles: line.styles.slice(0, cols) };
}

export class FrameWriter {
  private lines: CellLine[] | null = null;
  private size = '';
  private pending: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastWriteMs = -Infinity;
  /** bytes written so far (for the bench and tests) */
  bytes = 0;

  /**
   * @param minIntervalMs frames closer together than this are coalesced: the newest one is written
   *   when the interval has passed (a burst of keys or updates costs one update, not many)
   */
  constructor(
    private readonly out: FrameTarget,
    private readonly minIntervalMs = 0,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** a whole frame as Ink renders it: lines separated by '\n' */
  frame(text: string): void {
    this.pending = text;
    const wait = this.lastWriteMs + this.minIntervalMs - this.now();
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait);
  }

  /** write the pending frame now */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const text = this.pending;
    this.pending = null;
    if (text === null) return;
    this.lastWriteMs = this.now();
    const rows = this.out.rows || Number.POSITIVE_INFINITY;
    const cols = this.out.columns || Number.POSITIVE_INFINITY;
    const size = `${this.out.columns}x${this.out.rows}`;
    const prev = size === this.size ? this.lines : null;
    const next = text
      .split('\n')
      .slice(0, rows)
      // an unchanged line keeps its parse; a line wider than the screen would wrap: cut it
      .map((raw, i) => (prev?.[i]?.raw === raw ? prev[i]! : fitTo(parseLine(raw), cols)));
    let out = '';
    let changed = 0;
    if (prev === null) {
      out = HIDE_CURSOR + RESET + CLEAR;
      next.forEach((l, i) => {
        if (l.complex) out += `${cup(i, 0)}${l.raw}\x1b[0m`;
        else if (l.chars.length > 0) out += cup(i, 0) + span(l, 0, l.chars.length);
      });
      changed = next.length;
    } else {
      for (let i = 0; i < Math.max(prev.length, next.length); i++) {
        const u = lineUpdate(i, prev[i], next[i]);
        if (u === '') continue;
        out += u;
        changed++;
      }
    }
    this.lines = next;
    this.size = size;
    if (out === '') return;
    if (changed > 1) out = BEGIN_SYNC + out + END_SYNC;
    this.bytes += Buffer.byteLength(out);
    this.out.write(out);
  }

  /** paint the whole screen again with the newest frame (back from a suspend: the shell wrote over it) */
  repaint(): void {
    this.pending ??= this.lines?.map((l) => l.raw).join('\n') ?? null;
    this.lines = null;
    this.flush();
  }

  /** forget what the screen shows: the next frame repaints it whole (after a hand-over) */
  invalidate(): void {
    this.lines = null;
  }

  dispose(): void {
    this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
