/**
 * `heartbeat_rank{R}.jsonl` reader. Heartbeat files reach a million lines on long runs and are
 * re-read on every attach, so each line first tries one compiled regex that both validates and
 * captures a record of the exact shape Python's json.dumps gives nsa-vibe's records (key order,
 * `, ` / `: ` separators, escape-free ASCII strings, flat values). Anything else — other key orders,
 * escapes, nested values, UTF-8, malformed text — takes the general byte scanner, which accepts
 * exactly what JSON.parse (plus Python's NaN/Infinity) accepts. Both give the same values.
 */
import type { BeatEvent } from './events.js';
import { CONSUMED_KEYS, HeartbeatRecord, parseHeartbeatBytes } from './heartbeat-record.js';
import { POW10 } from './json-bytes.js';
import { MAX_LINE_CHARS } from './line-splitter.js';

// Building blocks of the fast-path regex (JSON grammar, restricted to the common shape).
const STR = '"[^"\\\\\\u0000-\\u001f\\u007f-\\uffff]*"';
const NUM = '(?:-?(?:0|[1-9]\\d*)(?:\\.\\d+)?(?:[eE][+-]?\\d+)?|NaN|-?Infinity)';
const INT = '-?(?:0|[1-9]\\d*)';
const SCALAR = `(?:${STR}|${NUM}|true|false|null)`;
const VALUE = `(?:${SCALAR}|\\[(?:${SCALAR}(?:, ${SCALAR})*)?\\])`;
// a consumed key may not appear again among the other keys (JSON.parse would keep the later one)
const CONSUMED = `"(?:${CONSUMED_KEYS.join('|')})"`;
// One record of the common shape. Validation only (no captures: test() is much cheaper than exec());
// the fields are then read at the positions this shape guarantees.
const RECORD =
  `\\{"ts": ${NUM}, "iso": ${STR}, "pid": ${INT}, "rank": ${INT}, "step": ${INT}, "msg": "[a-z_]*"` +
  `(?:, "gpu_mem_alloc": ${INT}, "gpu_mem_reserved": ${INT})?` +
  // a phase, the step's numbers, or both (a trainer that labels its progress record's phase too)
  `(?:, "phase": "[a-z_]*")?(?:, "loss": ${NUM}, "toks_per_s": ${NUM})?` +
  `(?:, (?!${CONSUMED})${STR}: ${VALUE})*\\}[ \\t\\r]*`;
/** A run of such lines, each with its newline: one regex call validates a whole chunk's worth. */
const FAST_RUN = new RegExp(`(?:${RECORD}\\n)*`, 'y');
const NEWLINE = Buffer.from('\n');

const EXACT_LIMIT = 2 ** 53;

/** Where the last readNumber stopped (the `,` or `}` after the number). */
let numEnd = 0;

/**
 * The JSON number (or NaN/Infinity) starting at line[s], up to the next `,` or `}` (the record was
 * validated, so one follows), exactly as Number() reads it: a plain decimal whose digits form an
 * integer below 2^53 is that exact integer divided by an exact power of ten, which IEEE division
 * rounds correctly; anything else goes through Number(). Sets numEnd.
 */
function readNumber(line: string, s: number): number {
  let i = s;
  const neg = line.charCodeAt(i) === 45;
  if (neg) i++;
  let mant = 0;
  let digits = 0;
  let frac = -1;
  let plain = true;
  for (; ; i++) {
    const c = line.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      mant = mant * 10 + (c - 48);
      digits++;
      if (frac >= 0) frac++;
    } else if (c === 46 && frac < 0) frac = 0;
    else if (c === 44 || c === 125) break;
    else plain = false;
  }
  numEnd = i;
  // 17+ digits may have been rounded while accumulating; 16 are exact iff the result is below 2^53
  if (!plain || digits > 16 || mant >= EXACT_LIMIT) return Number(line.slice(s, i));
  const v = frac > 0 ? mant / POW10[frac]! : mant;
  return neg ? -v : v;
}

/** Fields of the validated record at line[s] (its newline, or the end, at e). null: ts not finite. */
function extract(line: string, s: number, e: number): HeartbeatRecord | null {
  // {"ts": N, "iso": "…", "pid": N, "rank": N, "step": N, "msg": "…"[, "gpu_mem_alloc": N, …]
  const ts = readNumber(line, s + 7);
  if (!Number.isFinite(ts)) return null;
  const pid = readNumber(line, line.indexOf('"', numEnd + 10) + 10); // past `", "pid": `
  const rank = readNumber(line, numEnd + 10); // `, "rank": `
  const step = readNumber(line, numEnd + 10); // `, "step": `
  let p = numEnd + 10; // `, "msg": "`
  let q = line.indexOf('"', p);
  const msg = line.slice(p, q);
  p = q + 1;
  let alloc: number | undefined;
  let reserved: number | undefined;
  if (line.startsWith(', "gpu_mem_alloc": ', p)) {
    alloc = readNumber(line, p + 19);
    reserved = readNumber(line, numEnd + 22); // `, "gpu_mem_reserved": `
    p = numEnd;
  }
  let phase: string | undefined;
  let loss: number | undefined;
  let toks: number | undefined;
  if (line.startsWith(', "phase": "', p)) {
    p += 12;
    q = line.indexOf('"', p);
    phase = line.slice(p, q);
    p = q + 1;
  }
  if (line.startsWith(', "loss": ', p)) {
    loss = readNumber(line, p + 10);
    toks = readNumber(line, numEnd + 16); // `, "toks_per_s": `
  }
  // `iso` is always there, so `extra` is never empty: keep the text for the lazy parse
  const source = s === 0 && e === line.length ? line : line.slice(s, e);
  return new HeartbeatRecord(rank, step, ts, pid, msg, phase, alloc, reserved, loss, toks, source);
}

/**
 * Incremental reader for one heartbeat file (chunks from a tail). Works on bytes: a partial last line
 * is held until its newline arrives, and only `flush()` (end of analysis) judges it. A line longer
 * than MAX_LINE_CHARS bytes is dropped as it streams in (counted as skipped), so memory stays bounded.
 */
export class HeartbeatReader {
  private pending: Buffer | null = null;
  /** dropping an overlong line up to its newline */
  private discarding = false;
  /** lines that were not a heartbeat record (blank lines are not counted) */
  skippedLines = 0;

  /** `defaultRank`: the file's rank, for records that carry none */
  constructor(private readonly defaultRank = 0) {}

  push(buf: Buffer): BeatEvent[] {
    const out: BeatEvent[] = [];
    const first = buf.indexOf(10);
    if (first < 0) {
      this.hold(buf);
      return out;
    }
    // the chunk's first line ends a line held or being dropped
    const start = this.discarding || this.pending !== null ? first + 1 : 0;
    if (this.discarding) this.discarding = false;
    else if (this.pending !== null) {
      // complete the held line: join only the head of this chunk (and its newline) to it
      if (this.pending.length + first > MAX_LINE_CHARS) this.skippedLines++;
      else {
        const head = Buffer.concat([this.pending, buf.subarray(0, first + 1)]);
        this.lines(head, 0, head.length, out);
      }
      this.pending = null;
    }
    const last = buf.lastIndexOf(10);
    if (last >= start) this.lines(buf, start, last + 1, out);
    if (last + 1 < buf.length) this.hold(buf.subarray(last + 1));
    return out;
  }

  flush(): BeatEvent[] {
    const out: BeatEvent[] = [];
    if (this.pending !== null && !this.discarding) {
      const line = Buffer.concat([this.pending, NEWLINE]);
      this.lines(line, 0, line.length, out);
    }
    this.pending = null;
    this.discarding = false;
    return out;
  }

  private hold(part: Buffer): void {
    if (this.discarding) return;
    const size = (this.pending?.length ?? 0) + part.length;
    if (size > MAX_LINE_CHARS) {
      this.skippedLines++;
      this.pending = null;
      this.discarding = true;
      return;
    }
    // copy: the caller may reuse its chunk buffer
    this.pending = this.pending === null ? Buffer.from(part) : Buffer.concat([this.pending, part]);
  }

  /**
   * Lines in bytes [from, to), each ending with a newline. Decoded as latin1 once, so string offsets
   * equal byte offsets. Runs of common-shape records are validated by one regex call; any other
   * line goes through the byte scanner (UTF-8 aware, the whole JSON grammar).
   */
  private lines(buf: Buffer, from: number, to: number, out: BeatEvent[]): void {
    const text = (buf as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(from, to);
    const n = text.length;
    let s = 0;
    while (s < n) {
      FAST_RUN.lastIndex = s;
      const valid = FAST_RUN.test(text) ? FAST_RUN.lastIndex : s;
      while (s < valid) {
        const nl = text.indexOf('\n', s);
        const beat = extract(text, s, nl);
        if (beat !== null) out.push(beat);
        else this.skippedLines++;
        s = nl + 1;
      }
      if (s >= n) break;
      const nl = text.indexOf('\n', s);
      this.slowLine(buf, text, from, s, nl, out);
      s = nl + 1;
    }
  }

  private slowLine(buf: Buffer, text: string, from: number, s: number, e: number, out: BeatEvent[]): void {
    if (e - s > MAX_LINE_CHARS) {
      this.skippedLines++;
      return;
    }
    if (e === s) return;
    const beat = parseHeartbeatBytes(buf, from + s, from + e, this.defaultRank);
    if (beat !== null) out.push(beat);
    else if (text.slice(s, e).trim().length > 0) this.skippedLines++;
  }
}
