/**
 * Remote output is untrusted: a hostile or buggy trainer (or box) must not be able to move the
 * cursor, clear the screen, retitle the window, write to the clipboard (OSC 52), switch screens or
 * reorder what is drawn with bidi overrides. This is the one sanitiser for such text.
 *
 * - `stripTerminalEscapes`: for the parsers. Removes escapes and controls but keeps `\t` and `\n`,
 *   so a coloured step line still parses as the terminal would have shown it.
 * - `sanitizeText`: for drawing one row of a panel. Also expands tabs (a terminal jumps to the next
 *   tab stop while the layout counts a tab as nothing), turns line breaks into spaces (a row is one
 *   line), removes bidi controls and replaces lone surrogates with U+FFFD. Invalid UTF-8 never gets this far: the line splitter's
 *   StringDecoder already turned it into U+FFFD.
 *
 * Every sequence is removed whole when it is complete, and up to the end of the string when it is
 * not (a sequence split across lines or chunks): neither half can leave a control character behind,
 * because whatever a partial sequence leaves as text is plain printable text.
 */

// CSI: ESC [ or 8-bit 0x9b, parameters, intermediates, final byte.
// OSC/DCS/SOS/PM/APC (ESC ] P X ^ _ or 8-bit 0x9d 0x90 0x98 0x9e 0x9f), and screen's/tmux's window
// title (ESC k): up to BEL, ST (ESC \ or 0x9c) or the end of the string.
// Any other escape: ESC, intermediates (nF: ESC ( B), one final byte (ESC 7, ESC c, ESC M).
const ESCAPES =
  /(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?|(?:\u001b[\]PX^_k]|[\u0090\u0098\u009d\u009e\u009f])[\s\S]*?(?:\u0007|\u001b\\|\u009c|$)|\u001b[\u0020-\u002f]*[\u0030-\u007e]?/g;
/** C0 except tab and newline, DEL, C1. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/**
 * Bidi embeddings, overrides and isolates (U+202A–202E, U+2066–2069), the implicit marks (LRM, RLM,
 * ALM) and the zero-width no-break space (BOM): invisible, and they reorder or hide what follows.
 */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;
/** Line and paragraph separators (a NEL, U+0085, is a C1 control and removed with them). */
const LINE_BREAKS = /\r\n|[\n\r\u000b\u000c\u2028\u2029]/g;

/** Anything the slow path has work for; most lines have none and are returned as they are. */
const SUSPECT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
const SUSPECT_DISPLAY =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ufeff]/;
/** A surrogate without its other half (JSON can carry one): not text, drawn as U+FFFD. */
const LONE_SURROGATE_SRC = '[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]';
const LONE_SURROGATE = new RegExp(LONE_SURROGATE_SRC);
const LONE_SURROGATES = new RegExp(LONE_SURROGATE_SRC, 'g');

/** Remove escape sequences, control characters and bidi controls; keeps `\t` and `\n`. */
export function stripTerminalEscapes(s: string): string {
  if (!SUSPECT.test(s)) return s;
  return s.replace(ESCAPES, '').replace(CONTROLS, '').replace(BIDI, '');
}

/** Expand tabs to spaces up to the next stop (every `width` columns), counting code points as columns. */
function expandTabs(s: string, width: number): string {
  let out = '';
  let col = 0;
  for (const ch of s) {
    const text = ch === '\t' ? ' '.repeat(width - (col % width)) : ch;
    out += text;
    col += ch === '\t' ? text.length : 1;
  }
  return out;
}

/** Text from a remote source made safe to draw as one row. */
export function sanitizeText(s: string): string {
  if (!SUSPECT_DISPLAY.test(s) && !LONE_SURROGATE.test(s)) return s;
  let out = s
    .replace(LONE_SURROGATES, '\ufffd')
    .replace(ESCAPES, '')
    .replace(LINE_BREAKS, ' ')
    .replace(CONTROLS, '')
    .replace(BIDI, '');
  // tab stops every 8 columns, as terminals do
  if (out.includes('\t')) out = expandTabs(out, 8);
  return out;
}
