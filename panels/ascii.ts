/**
 * ASCII mode: for terminals and locales that cannot show braille, block or box-drawing characters
 * (a serial console, LANG=C over ssh). The panels keep drawing with their usual glyphs and the frame
 * is folded character by character, one cell for one cell, so the layout Ink computed still holds:
 * braille cells become `'`, `-`, `.`, `|` after where their dots sit, sparkline blocks an ASCII ramp,
 * gauge cells `#` and `.`, rules `|`, `-` and `+`, typography its ASCII look-alike. Remote text is
 * made ASCII before layout (`asciiText`), so what reaches the frame fold is the panels' own one-cell
 * glyphs and Ink's truncation ellipsis.
 */

/** ASCII mode unless the locale says UTF-8: LC_ALL, else LC_CTYPE, else LANG, as setlocale reads them. */
export function asciiFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
  return !/utf-?8/i.test(locale);
}

/** `--ascii` / `--no-ascii` win; without either the locale decides. */
export function resolveAscii(flag: boolean | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  return flag ?? asciiFromEnv(env);
}

/** ▁▂▃▄▅▆▇█, lowest to highest. */
const RAMP = '_.,-=+*#';

const SINGLE: Record<string, string> = {
  '·': '|',
  '•': '*',
  '…': '~',
  '–': '-',
  '—': '-',
  '‐': '-',
  '−': '-',
  '›': '>',
  '‹': '<',
  '→': '>',
  '←': '<',
  '↑': '^',
  '↓': 'v',
  '°': ' ',
  '×': 'x',
  '≤': '<',
  '≥': '>',
  '≈': '~',
  '±': '+',
  µ: 'u',
  '‘': "'",
  '’': "'",
  '“': '"',
  '”': '"',
  '░': '.',
  '▒': ':',
  '▓': '#',
  '\u00a0': ' ',
};

/** Dot bits of a braille cell by row, top to bottom (Unicode braille layout). */
const BRAILLE_ROWS = [0x01 | 0x08, 0x02 | 0x10, 0x04 | 0x20, 0x40 | 0x80];

/** A braille cell as one ASCII character: where its dots sit vertically, or `|` for a steep run. */
export function brailleToAscii(bits: number): string {
  let top = -1;
  let bottom = -1;
  BRAILLE_ROWS.forEach((mask, row) => {
    if ((bits & mask) === 0) return;
    if (top < 0) top = row;
    bottom = row;
  });
  if (top < 0) return ' ';
  if (bottom - top >= 2) return '|';
  const mid = (top + bottom) / 2;
  return mid <= 0.5 ? "'" : mid <= 2 ? '-' : '.';
}

function foldChar(ch: string): string {
  const single = SINGLE[ch];
  if (single !== undefined) return single;
  const cp = ch.codePointAt(0) ?? 0;
  if (cp >= 0x2800 && cp <= 0x28ff) return brailleToAscii(cp - 0x2800);
  if (cp >= 0x2581 && cp <= 0x2588) return RAMP[cp - 0x2581] ?? '#';
  if (cp >= 0x2580 && cp <= 0x259f) return '#';
  if (cp >= 0x2500 && cp <= 0x257f) {
    // box drawing: vertical strokes, horizontal strokes, and everything that joins them
    if ('│┃║╎╏┆┇┊┋'.includes(ch)) return '|';
    if ('─━═╌╍┄┅┈┉'.includes(ch)) return '-';
    return '+';
  }
  return '?';
}

/**
 * Fold one output line to printable ASCII, one character per character. Escape sequences (Ink's own
 * SGR styling) are ASCII already and pass through untouched.
 */
export function foldToAscii(line: string): string {
  if (!/[^\u0000-\u007f]/.test(line)) return line;
  let out = '';
  for (const ch of line) out += ch.charCodeAt(0) < 0x80 ? ch : foldChar(ch);
  return out;
}

/**
 * Remote text (already sanitised) in ASCII mode, before layout measures it: look-alikes where there
 * are, `?` for anything else, one per character; combining marks go with their base letter.
 */
export function asciiText(s: string): string {
  return foldToAscii(s.replace(/\p{M}+/gu, ''));
}
