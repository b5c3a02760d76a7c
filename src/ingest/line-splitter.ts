/**
 * Turns a stream of chunks (PTY output, file tails) into lines. Chunks may split a UTF-8 sequence or a
 * line anywhere, so bytes go through a StringDecoder and the unfinished tail is kept for the next push.
 *
 * Carriage returns: a `\r\n` ending is a plain newline; a bare `\r` inside a line is a progress bar
 * redrawing itself (`10%\r20%\r30%\n`), and only what is left on screen (the last segment) is kept.
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
  /** lines that were longer than the cap and were emitted truncated */
  overlong = 0;

  constructor(opts: { maxLineChars?: number } = {}) {
    this.maxLineChars = opts.maxLineChars ?? MAX_LINE_CHARS;
  }

  push(chunk: Buffer | string): string[] {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    const out: string[] = [];
    if (text.length === 0) return out;
    let nl = text.indexOf('\n');
    if (nl < 0) {
      this.absorb(text);
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
    if (start < text.length) this.absorb(text.slice(start));
    return out;
  }

  /** End of stream: the unfinished last line, if any. */
  flush(): string[] {
    const rest = this.decoder.end();
    const out: string[] = [];
    if (rest.length > 0) this.absorb(rest);
    if (this.discarding) this.emitCut(0, out);
    else if (this.pending.length > 0) out.push(lastCrSegment(this.pending));
    this.pending = '';
    return out;
  }

  /** Text with no newline: hold it, unless the held line grows past the cap. */
  private absorb(text: string): void {
    if (this.discarding) {
      this.cutBytes += Buffer.byteLength(text);
      return;
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
    if (line.length <= this.maxLineChars) out.push(line.indexOf('\r') < 0 ? line : lastCrSegment(line));
    else {
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
