/**
 * One rendered line as terminal cells: the character and the SGR style of each column. This is what
 * lets the frame writer send only the columns that changed (a clock's seconds, an age counter)
 * instead of whole lines. Ink's frames hold plain text and SGR sequences only; a line with anything
 * else (another escape, a character whose width is not certainly one column) is marked `complex`,
 * and the writer redraws such a line whole.
 */

export interface CellLine {
  /** one entry per column */
  chars: string[];
  /** the SGR state of each column, as the parameters that re-create it from a reset ('' = plain) */
  styles: string[];
  /** not safely split into single-width cells: redraw whole */
  complex: boolean;
  /** the line as Ink wrote it */
  raw: string;
}

interface Sgr {
  fg: string;
  bg: string;
  /** on attributes by SGR number: 1 bold, 2 dim, 3 italic, 4 underline, 5 blink, 7 inverse, 8 hidden, 9 strike */
  attrs: Set<number>;
}

const OFF: Record<number, number[]> = { 22: [1, 2], 23: [3], 24: [4], 25: [5], 27: [7], 28: [8], 29: [9] };

/**
 * Code points that every terminal draws one column wide, as Ink measures them: ASCII, Latin,
 * Greek, Cyrillic, general punctuation, arrows and maths, box drawing, blocks, shapes and braille
 * (what the panels draw). Anything else (CJK, emoji, combining marks) makes the line complex.
 */
export function narrow(cp: number): boolean {
  if (cp >= 0x20 && cp < 0x7f) return true;
  if (cp >= 0xa0 && cp < 0x300) return true;
  if (cp >= 0x370 && cp < 0x500) return true;
  if (cp >= 0x2010 && cp < 0x2028) return true;
  if (cp >= 0x2030 && cp < 0x205f) return true;
  if (cp >= 0x2190 && cp < 0x2300) return true;
  if (cp >= 0x2500 && cp < 0x25fd) return true;
  return cp >= 0x2800 && cp < 0x2900;
}

/** Every character of `s` is one UTF-16 unit that `narrow` accepts: one column per unit. */
export function allNarrowUnits(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 0xd800 && c < 0xe000) || !narrow(c)) return false;
  }
  return true;
}

/** Apply one SGR parameter list; false when it holds something this model does not know. */
function applySgr(s: Sgr, params: string): boolean {
  if (params.includes(':')) return false;
  const p = params === '' ? [0] : params.split(';').map(Number);
  for (let i = 0; i < p.length; i++) {
    const n = p[i]!;
    if (n === 0) {
      s.fg = '';
      s.bg = '';
      s.attrs.clear();
    } else if ((n >= 1 && n <= 5) || (n >= 7 && n <= 9)) s.attrs.add(n);
    else if (OFF[n]) for (const a of OFF[n]!) s.attrs.delete(a);
    else if ((n >= 30 && n <= 37) || (n >= 90 && n <= 97)) s.fg = String(n);
    else if ((n >= 40 && n <= 47) || (n >= 100 && n <= 107)) s.bg = String(n);
    else if (n === 39) s.fg = '';
    else if (n === 49) s.bg = '';
    else if (n === 38 || n === 48) {
      const len = p[i + 1] === 5 ? 2 : p[i + 1] === 2 ? 4 : 0;
      if (len === 0 || i + len >= p.length) return false;
      const code = p.slice(i, i + len + 1).join(';');
      if (n === 38) s.fg = code;
      else s.bg = code;
      i += len;
    } else return false;
  }
  return true;
}

/** every style key seen, with its parts (for transitions between two styles) */
const parts = new Map<string, { attrs: number[]; fg: string; bg: string }>([
  ['', { attrs: [], fg: '', bg: '' }],
]);

function styleKey(s: Sgr): string {
  const attrs = [...s.attrs].sort((a, b) => a - b);
  const list = attrs.map(String);
  if (s.fg) list.push(s.fg);
  if (s.bg) list.push(s.bg);
  const key = list.join(';');
  if (!parts.has(key)) parts.set(key, { attrs, fg: s.fg, bg: s.bg });
  return key;
}

const OFF_CODE: Record<number, number> = { 1: 22, 2: 22, 3: 23, 4: 24, 5: 25, 7: 27, 8: 28, 9: 29 };

/**
 * The SGR sequence from style `a` to style `b` that touches only what differs: text styled this
 * way keeps whatever an enclosing transform (a colour around the whole line) set beneath it.
 */
export function sgrTransition(a: string, b: string): string {
  if (a === b) return '';
  const from = parts.get(a)!;
  const to = parts.get(b)!;
  const codes: Array<number | string> = [];
  const off = from.attrs.filter((x) => !to.attrs.includes(x));
  for (const x of off) if (!codes.includes(OFF_CODE[x]!)) codes.push(OFF_CODE[x]!);
  // 22 ends bold and dim together: put back the one that stays
  const on = to.attrs.filter((x) => !from.attrs.includes(x) || (codes.includes(22) && (x === 1 || x === 2)));
  codes.push(...on);
  if (from.fg !== to.fg) codes.push(to.fg || 39);
  if (from.bg !== to.bg) codes.push(to.bg || 49);
  return `\x1b[${codes.join(';')}m`;
}

const SGR = /^\x1b\[([0-9;:]*)m/;

/**
 * One string per narrow code point, made once: a changed line is parsed every frame, and a fresh
 * string for each braille or box-drawing cell (String.fromCodePoint allocates for every code point
 * past Latin-1) is garbage that outlives the frame and is promoted.
 */
const NARROW_CHARS = new Array<string | undefined>(0x2900);
/** the string of a code point that `narrow` accepts */
function narrowChar(cp: number): string {
  let ch = NARROW_CHARS[cp];
  if (ch === undefined) {
    ch = String.fromCodePoint(cp);
    NARROW_CHARS[cp] = ch;
  }
  return ch;
}

export function parseLine(raw: string): CellLine {
  const chars: string[] = [];
  const styles: string[] = [];
  const s: Sgr = { fg: '', bg: '', attrs: new Set() };
  let key = '';
  let complex = false;
  for (let i = 0; i < raw.length && !complex; ) {
    const c = raw.charCodeAt(i);
    if (c === 0x1b) {
      const m = SGR.exec(raw.slice(i, i + 40));
      if (m === null || !applySgr(s, m[1]!)) complex = true;
      else key = styleKey(s);
      i += m === null ? 1 : m[0].length;
      continue;
    }
    const cp = raw.codePointAt(i)!;
    let ch: string;
    if (narrow(cp)) ch = narrowChar(cp);
    else {
      complex = true;
      ch = String.fromCodePoint(cp);
    }
    chars.push(ch);
    styles.push(key);
    i += ch.length;
  }
  return { chars, styles, complex, raw };
}

/** The SGR sequence that sets `style` from any state. */
export function sgrOf(style: string): string {
  return style === '' ? '\x1b[0m' : `\x1b[0;${style}m`;
}
