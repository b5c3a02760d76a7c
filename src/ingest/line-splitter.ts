/**
 * Turns a stream of chunks (PTY output, file tails) into lines. Chunks may split a UTF-8 sequence or a
 * line anywhere, so bytes go through a StringDecoder and the unfinished tail is kept for the next push.
 *
 * Carriage returns: a `\r\n` ending is a plain newline; a bare `\r` inside a line is a progress bar
 * redrawing itself (`10%\r20%\r30%\n`), and the line is what is left on screen (the last segment).
 * With `progress` on (a trainer's output), each redraw is also given as it arrives, marked by a
 * leading `\r` (see `isRedraw`): a tqdm bar that redraws for an hour before its newline is progress
 * all along, not one line at the end. A segment is a redraw once the character after its `\r`s is
 * known and is not `\n`, so the same bytes give the same redraws however they are chunked.
 */
import { StringDecoder } from 'node:string_decoder';

/** Longest line kept; anything longer is cut here so one runaway write cannot exhaust memory. */
export const MAX_LINE_CHARS = 1024 * 1024;
/**
 * Appended to a line that was cut at MAX_LINE_CHARS (parsers count such lines as skipped), with the
 * whole line's length in UTF-8 bytes: the view says how long the line really was.
 */
export const truncationMark = (bytes: number) => ` \u2026[line truncated: ${bytes} bytes]`;
const MARK = / \u2026\[line truncated: (\d+) bytes\]$/;

/** A cut line's kept head and the whole line's length in bytes; null for a line that was not cut. */
export function truncatedLine(line: string): { head: string; bytes: number } | null {
  if (!line.endsWith(' bytes]')) return null;
  const m = MARK.exec(line.slice(-64));
  if (!m) return null;
  return { head: line.slice(0, line.length - m[0].length), bytes: Number(m[1]) };
}

/** A redraw of a progress line (`progress` splitters): the segment follows this mark. */
export const REDRAW_MARK = '\r';
/** a redraw, not a line: a terminal overwrites it (its text is `line.slice(1)`) */
export const isRedraw = (line: string): boolean => line.charCodeAt(0) === 13;

/** Keep what a terminal would show for a line that contains bare carriage returns. */
function lastCrSegment(line: string): string {
  let end = line.length;
  // trailing \r (from \r\n or a bar that ends on \r) carries no text of its own
  while (end > 0 && line.charCodeAt(end - 1) === 13) end--;
  const cr = line.lastIndexOf('\r', end - 1);
  if (cr < 0) return end === line.length ? line : line.slice(0, end);
  return line.slice(cr + 1, end);
}

export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  /** true while dropping the rest of an overlong line, up to its newline */
  private discarding = false;
  /**
   * The overlong line being dropped: its kept head and its length so far. It is emitted when its
   * newline (or the end of the stream) comes, so the mark can carry its whole length.
   */
  private cutHead = '';
  private cutBytes = 0;
  private readonly maxLineChars: number;
  private readonly progress: boolean;
  /** lines that were longer than the cap and were emitted truncated */
  overlong = 0;

  constructor(opts: { maxLineChars?: number; progress?: boolean } = {}) {
    this.maxLineChars = opts.maxLineChars ?? MAX_LINE_CHARS;
    this.progress = opts.progress === true;
  }

  push(chunk: Buffer | string): string[] {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    const out: string[] = [];
    if (text.length === 0) return out;
    let nl = text.indexOf('\n');
    if (nl < 0) {
      this.absorb(text, out);
      return out;
    }
    // first line completes whatever was pending
    const first = text.slice(0, nl);
    if (this.discarding) this.emitCut(Buffer.byteLength(first), out);
    else this.emit(this.pending.length > 0 ? this.pending + first : first, out);
    this.pending = '';
    let start = nl + 1;
    nl = text.indexOf('\n', start);
    while (nl >= 0) {
      this.emit(text.slice(start, nl), out);
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    if (start < text.length) this.absorb(text.slice(start), out);
    return out;
  }

  /** End of stream: the unfinished last line, if any. */
  flush(): string[] {
    const rest = this.decoder.end();
    const out: string[] = [];
    if (rest.length > 0) this.absorb(rest, out);
    if (this.discarding) this.emitCut(0, out);
    else if (this.pending.length > 0) this.emit(this.pending, out);
    this.pending = '';
    return out;
  }

  /** Text with no newline: hold it, unless the held line grows past the cap (redraws go on). */
  private absorb(text: string, out: string[]): void {
    if (this.discarding) {
      this.cutBytes += Buffer.byteLength(text);
      return;
    }
    // a held trailing \r becomes a redraw's end once more text follows it
    if (
      this.progress &&
      (text.indexOf('\r') >= 0 || this.pending.charCodeAt(this.pending.length - 1) === 13)
    ) {
      const line = this.pending + text;
      const cut = lastRedrawEnd(line);
      if (cut > 0) {
        pushRedraws(line.slice(0, cut), out);
        this.pending = '';
        text = line.slice(cut);
      }
    }
    if (this.pending.length + text.length > this.maxLineChars) {
      const line = this.pending + text;
      this.cutHead = line.slice(0, this.maxLineChars);
      this.cutBytes = Buffer.byteLength(line);
      this.pending = '';
      this.discarding = true;
      return;
    }
    this.pending += text;
  }

  /** a line seen whole (its newline in the same text): what a terminal shows of it, or cut when overlong */
  private emit(line: string, out: string[]): void {
    if (line.length <= this.maxLineChars) {
      if (line.indexOf('\r') < 0) out.push(line);
      else {
        // the segments before the one left on screen were redraws
        if (this.progress) pushRedraws(line.slice(0, Math.max(0, lastRedrawEnd(line) - 1)), out);
        out.push(lastCrSegment(line));
      }
    } else {
      this.overlong++;
      out.push(line.slice(0, this.maxLineChars) + truncationMark(Buffer.byteLength(line)));
    }
  }

  /** the end of the overlong line being dropped: `tailBytes` more before its newline */
  private emitCut(tailBytes: number, out: string[]): void {
    this.overlong++;
    out.push(this.cutHead + truncationMark(this.cutBytes + tailBytes));
    this.cutHead = '';
    this.cutBytes = 0;
    this.discarding = false;
  }
}

/**
 * Where the redraws of an unfinished line end: just after its last run of `\r`s that some other
 * character follows (0: none yet). A trailing run waits: a `\n` may come next (`\r\n` ends a line).
 */
function lastRedrawEnd(text: string): number {
  let i = text.length - 1;
  while (i >= 0 && text.charCodeAt(i) === 13) i--;
  const cr = text.lastIndexOf('\r', i);
  return cr < 0 ? 0 : cr + 1;
}

/** the segments of `text` (redraws, each ended by `\r`s) as marked redraws; blank ones (a bar's erase) left out */
function pushRedraws(text: string, out: string[]): void {
  for (const seg of text.split('\r')) if (seg.trim() !== '') out.push(REDRAW_MARK + seg);
}
