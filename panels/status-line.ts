/**
 * The status line's text: what a key or the engine just said (a dump's outcome, "X is not a key
 * here", the stop countdown), whole. It once shared the header's second line with the verdict
 * banner and was cut off there exactly while a run was hung, so it has lines of its own at the
 * bottom (in place of the key hints while it shows), wrapped at spaces. Pure, so the App (for the
 * log's page size) and the Dashboard (to draw) get the same rows.
 */
import { sanitizeText } from '../src/util/ansi.js';
import { boundForDrawing } from './display.js';
import { wrapPhrases } from './format.js';

/** a notice longer than this many rows (a quoted error) ends with … on the last one */
export const MAX_STATUS_ROWS = 3;

/** `text` wrapped to `width` at spaces (a longer word is split), at most MAX_STATUS_ROWS rows */
export function statusLines(text: string | null | undefined, width: number): string[] {
  if (!text) return [];
  const w = Math.max(1, width);
  const rows = wrapPhrases(sanitizeText(boundForDrawing(text)).split(/\s+/).filter(Boolean), w, ' ');
  if (rows.length <= MAX_STATUS_ROWS) return rows;
  const kept = rows.slice(0, MAX_STATUS_ROWS);
  kept[MAX_STATUS_ROWS - 1] = `${kept[MAX_STATUS_ROWS - 1]!.slice(0, w - 1)}…`;
  return kept;
}
