/** Small text helpers shared by the panels. Pure; no Ink. */

/** `42s`, `3m 05s`, `1h 02m` for an elapsed time in milliseconds. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** Seconds with one decimal below a minute (`3.1s`), whole seconds above (`74s`). */
export function formatSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return '–';
  return s < 60 ? `${s.toFixed(1)}s` : `${Math.round(s)}s`;
}

/** MiB with thousands separators: `143,771`. */
export function formatMiB(mib: number): string {
  return Math.round(mib).toLocaleString('en-US');
}

/** The last `parts` components of a path: `/root/nsa-vibe/nsa/core/x.py` → `nsa/core/x.py`. */
export function shortenPath(file: string, parts = 3): string {
  const pieces = file.split('/').filter((p) => p !== '');
  return pieces.length <= parts ? file : pieces.slice(-parts).join('/');
}

/** Base name of a path. */
export function baseName(file: string): string {
  return file.slice(file.lastIndexOf('/') + 1);
}

/**
 * Greedy line packing of phrases joined by `sep`: phrases never split unless one alone is wider
 * than `width`, in which case it is hard-cut. Used where a message must be read whole (the HANG
 * banner) and the layout must know its height in advance.
 */
export function wrapPhrases(phrases: readonly string[], width: number, sep = ' · '): string[] {
  const w = Math.max(1, width);
  const lines: string[] = [];
  let cur = '';
  for (const phrase of phrases) {
    const candidate = cur === '' ? phrase : cur + sep + phrase;
    if (candidate.length <= w) {
      cur = candidate;
      continue;
    }
    if (cur !== '') lines.push(cur);
    let rest = phrase;
    while (rest.length > w) {
      lines.push(rest.slice(0, w));
      rest = rest.slice(w);
    }
    cur = rest;
  }
  if (cur !== '') lines.push(cur);
  return lines;
}

/** Pad or cut to exactly `width` characters (for columns inside one Text); a cut ends in `…`. */
export function padCut(text: string, width: number): string {
  if (width <= 0) return '';
  return text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);
}

/**
 * Pair items with position-based keys, for lists whose identity *is* the position (plot rows, stack
 * frames, where the same file:line can repeat under recursion).
 */
export function positional<T>(items: readonly T[]): { key: string; item: T }[] {
  return items.map((item, i) => ({ key: `p${i}`, item }));
}
