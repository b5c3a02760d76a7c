/**
 * One trainer line as the log pane keeps it. A terminal row shows a few hundred characters at most,
 * and measuring a line costs time in its length on every frame (Ink's string-width: a 1 MB line took
 * seconds a frame and froze the dashboard for good), so a line is cut here, once, before anything
 * draws or measures it. The bytes stay in the evidence (stdout.log); the cut line says how many
 * bytes it no longer shows.
 */
import { truncatedLine } from '../ingest/line-splitter.js';
import type { LogLine } from './state.js';

/** characters of a line kept for the view: wider than any terminal */
export const LOG_LINE_CHARS = 1000;

/** `…[+2,097,152 bytes]`: what a cut line shows after its head */
export function cutMark(bytes: number): string {
  return `\u2026[+${bytes.toLocaleString('en-US')} bytes]`;
}

/** A line cut to `max` characters (never inside a surrogate pair), with the bytes it leaves out. */
export function boundLine(line: string, max = LOG_LINE_CHARS): Omit<LogLine, 'id'> {
  // a line the splitter already cut knows its whole length; its head is at most the splitter's cap
  const cut = truncatedLine(line);
  const head = cut ? cut.head : line;
  if (!cut && head.length <= max) return { text: line };
  let end = Math.min(max, head.length);
  const last = head.charCodeAt(end - 1);
  if (end < head.length && last >= 0xd800 && last <= 0xdbff) end--;
  const text = head.slice(0, end);
  const whole = cut ? cut.bytes : Buffer.byteLength(head);
  // a copy: a slice of a megabyte line would keep the whole line alive in the ring
  return { text: Buffer.from(text, 'utf8').toString('utf8'), cutBytes: whole - Buffer.byteLength(text) };
}
