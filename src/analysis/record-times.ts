/**
 * A tracker's recent record times, each with the position it put the rank at (progressPosition),
 * newest kept: whether one source spoke during another's silence is read from them
 * (past-stalls.ts). Two typed rings, not arrays of numbers: at 512 ranks the arrays (shifted at
 * their cap, their capacity grown by half again) were 70 KB a rank.
 */
export class RecordTimes {
  private ts = new Float64Array(0);
  private pos = new Float64Array(0);
  /** index of the oldest kept time */
  private head = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** keep `t` at `position`; the oldest go while more than `limit` are kept */
  push(t: number, position: number, limit: number): void {
    while (this.count > 0 && this.count >= limit) this.dropOldest();
    if (limit <= 0) return;
    if (this.count === this.ts.length) this.grow(limit);
    const i = (this.head + this.count) % this.ts.length;
    this.ts[i] = t;
    this.pos[i] = position;
    this.count++;
  }

  /**
   * the times, oldest first, strictly between `from` and `to`, of records that put the rank past
   * `position`
   */
  between(from: number, to: number, position: number): number[] {
    const out: number[] = [];
    const cap = this.ts.length;
    for (let k = this.count - 1; k >= 0; k--) {
      const i = (this.head + k) % cap;
      const t = this.ts[i]!;
      if (t <= from) break;
      if (t < to && this.pos[i]! > position) out.push(t);
    }
    return out.reverse();
  }

  private dropOldest(): void {
    this.head = (this.head + 1) % this.ts.length;
    this.count--;
  }

  /** twice the room (at least 16), never more than `limit`, the kept times moved to the front */
  private grow(limit: number): void {
    const cap = Math.max(this.count + 1, Math.min(limit, Math.max(16, this.ts.length * 2)));
    const ts = new Float64Array(cap);
    const pos = new Float64Array(cap);
    for (let k = 0; k < this.count; k++) {
      const i = (this.head + k) % this.ts.length;
      ts[k] = this.ts[i]!;
      pos[k] = this.pos[i]!;
    }
    this.ts = ts;
    this.pos = pos;
    this.head = 0;
  }
}
