/** A horizontal `█`/`░` bar with a percentage, e.g. `█████░░░░░  50%`. */

export interface GaugeOptions {
  /** draw a `┃` at this fraction of the bar (a limit line), when it falls inside */
  markAt?: number;
}

/** Fraction of `value` over `total`, 0 when total is not positive. */
export function ratio(value: number, total: number): number {
  return total > 0 && Number.isFinite(value) ? value / total : 0;
}

/** Percentage text, always 4 characters wide (`  7%`, ` 42%`, `100%`; more than 100 % grows). */
export function percent(fraction: number): string {
  return `${Math.round(fraction * 100)}%`.padStart(4);
}

/** The bar alone, exactly `width` characters. Values over 100 % fill the bar. */
export function gaugeBar(fraction: number, width: number, opts: GaugeOptions = {}): string {
  if (width <= 0) return '';
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  const filled = Math.round(f * width);
  const cells = [...('█'.repeat(filled) + '░'.repeat(width - filled))];
  if (opts.markAt !== undefined && opts.markAt > 0 && opts.markAt < 1) {
    cells[Math.min(width - 1, Math.floor(opts.markAt * width))] = '┃';
  }
  return cells.join('');
}

/** Bar of `width` cells followed by a space and the percentage. */
export function gauge(value: number, total: number, width: number, opts: GaugeOptions = {}): string {
  const f = ratio(value, total);
  return `${gaugeBar(f, width, opts)} ${percent(f)}`;
}
