/**
 * A chart's series in bounded memory, whatever the run's length: the newest TAIL steps exactly (a
 * value may still be replaced there, and sources arrive slightly out of order), everything older
 * decimated by a stride that doubles whenever MAX points are kept (every 2nd, 4th, ... step).
 * A chart of 1 M steps draws at most MAX + TAIL points and says "N of M points".
 */
import type { SeriesPoint } from './state.js';

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

  /**
   * A value for a step. `replace`: a newer source for the same step wins (a step line over a
   * heartbeat); otherwise the first value stays. A step older than the tail is dropped.
   */
  set(step: number, value: number, replace: boolean): void {
    if (step <= this.newest - TAIL) return;
    const had = this.tail.has(step);
    if (had && !replace) return;
    this.tail.set(step, value);
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
