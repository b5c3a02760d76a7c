/**
 * How a trainer logs its steps, learned from the step lines themselves: which format printed them,
 * every how many steps (`log_interval`), whether the counter starts at 0, and the target count
 * where a line says it (`45/100`). A trainer that logs every 10 steps from 0 never prints the last
 * step of a 200-step run: the cadence is what tells that the run still got there.
 */

export interface StepFormatReport {
  /** the format of most step lines (nsa-vibe, nanogpt, mingpt, hf, inferred, preset-regex, …); null: none */
  name: string | null;
  /** steps between two logged step lines (the most common gap) */
  every: number;
  /** 0: the counter starts at 0 (a step `0` was logged); 1 otherwise */
  base: 0 | 1;
  /** the target step count a step line said (`step N of M`), the last one seen */
  total?: number;
  /** a shape learned from the output: what it looks like and the regex that reads it */
  inferred?: { template: string; stepRegex: string };
}

/** distinct gaps counted (a trainer has one or two: the interval, and the odd one at a restart) */
const MAX_GAPS = 16;

export class StepCadence {
  private readonly prev = new Map<number, number>();
  private readonly gaps = new Map<number, number>();
  private readonly formats = new Map<string, number>();
  private zeroSeen = false;
  private total: { step: number; of: number } | null = null;

  add(rank: number, step: number, format: string, total?: number): void {
    this.formats.set(format, (this.formats.get(format) ?? 0) + 1);
    if (step === 0) this.zeroSeen = true;
    const p = this.prev.get(rank);
    if (p !== undefined && step > p) {
      const gap = step - p;
      if (this.gaps.has(gap) || this.gaps.size < MAX_GAPS) this.gaps.set(gap, (this.gaps.get(gap) ?? 0) + 1);
    }
    this.prev.set(rank, step);
    if (total !== undefined && total > 0 && (this.total === null || step >= this.total.step))
      this.total = { step, of: total };
  }

  /** the most common gap between logged steps (the smaller on a tie); 1 before two steps */
  every(): number {
    let best = 1;
    let n = 0;
    for (const [gap, c] of this.gaps) if (c > n || (c === n && gap < best)) [best, n] = [gap, c];
    return best;
  }

  report(inferred?: { template: string; stepRegex: string }): StepFormatReport | null {
    let name: string | null = null;
    let n = 0;
    for (const [f, c] of this.formats) if (c > n) [name, n] = [f, c];
    if (name === null && inferred === undefined) return null;
    const out: StepFormatReport = { name, every: this.every(), base: this.zeroSeen ? 0 : 1 };
    if (this.total !== null) out.total = this.total.of;
    if (inferred !== undefined) out.inferred = inferred;
    return out;
  }
}

/** the format in a few words, for the header: "mingpt, every 10 from 0", "learned: iter #: loss #" */
export function stepFormatText(f: StepFormatReport | null): string | null {
  if (f === null) return null;
  const name = f.inferred ? `learned "${f.inferred.template}"` : (f.name ?? '?');
  return `${name}${f.every > 1 ? `, every ${f.every}` : ''}${f.base === 0 ? ' from 0' : ''}`;
}
