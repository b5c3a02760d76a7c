/**
 * A chart's series in bounded memory, whatever the run's length: the newest TAIL steps exactly (a
 * value may still be replaced there, and sources arrive slightly out of order), everything older
 * decimated by a stride that doubles whenever MAX points are kept (every 2nd, 4th, ... step).
 * A chart of 1 M steps draws at most MAX + TAIL points and says "N of M points".
 */

export interface SeriesPoint {
  step: number;
  value: number;
}

const MAX = 1024;
const TAIL = 64;

export class Series {
  /** older points, decimated: every `stride`-th step that left the tail */
  private kept: SeriesPoint[] = [];
  private stride = 1;
  private sealed = 0;
  private readonly tail = new Map<number, number>();
  private newest = Number.NEGATIVE_INFINITY;
  /** distinct steps seen */
  total = 0;
  private view: SeriesPoint[] | null = [];

  /** the priority of each tail step's value */
  private readonly pri = new Map<number, number>();

  /**
   * A value for a step, from a source of this priority: a higher one replaces a lower one's value
   * for the same step, whichever came first (a step line over a heartbeat, rank 0 over rank 1); of
   * equal priority the first stays. A step older than the tail is dropped.
   */
  set(step: number, value: number, priority = 0): void {
    if (step <= this.newest - TAIL) return;
    const had = this.tail.has(step);
    if (had && priority <= this.pri.get(step)!) return;
    this.tail.set(step, value);
    this.pri.set(step, priority);
    this.view = null;
    if (had) return;
    this.total++;
    if (step > this.newest) this.newest = step;
    if (this.tail.size > 2 * TAIL) this.seal();
  }

  /** move the steps that left the tail window into the decimated part, oldest first */
  private seal(): void {
    const old = [...this.tail.keys()].filter((s) => s <= this.newest - TAIL).sort((a, b) => a - b);
    for (const step of old) {
      if (this.sealed++ % this.stride === 0) this.kept.push({ step, value: this.tail.get(step)! });
      this.tail.delete(step);
      this.pri.delete(step);
      if (this.kept.length > MAX) {
        this.kept = this.kept.filter((_, i) => i % 2 === 0);
        this.stride *= 2;
      }
    }
  }

  /** the points to draw, oldest first; the same array until something changes */
  points(): SeriesPoint[] {
    if (this.view === null) {
      const recent = [...this.tail.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([step, value]) => ({ step, value }));
      this.view = this.kept.length === 0 ? recent : [...this.kept, ...recent];
    }
    return this.view;
  }
}
