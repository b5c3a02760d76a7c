import type { Target } from '../targets/target.js';

/**
 * Whether a process burns CPU, from utime+stime in /proc/PID/stat sampled over time. A stalled
 * trainer spinning in Python (busy) and one blocked in a collective or a syscall (idle) need
 * different next steps, so the stall banner says which.
 */
export function cpuTicks(statText: string): number | null {
  // the command name (field 2) may contain spaces and parens: parse after the last ')'
  const rest = statText.slice(statText.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? utime + stime : null;
}

export class CpuSampler {
  private last = new Map<number, { ticks: number; at: number }>();

  constructor(
    private readonly target: Target,
    /** USER_HZ; 100 on every Linux we target */
    private readonly hz = 100,
  ) {}

  /** fraction of one core used since the previous sample of this pid (null on the first one) */
  async sample(pid: number, nowMs = Date.now()): Promise<number | null> {
    const b = await this.target.readFile(`/proc/${pid}/stat`).catch(() => null);
    const ticks = b ? cpuTicks(b.toString('utf8')) : null;
    if (ticks === null) {
      this.last.delete(pid);
      return null;
    }
    const prev = this.last.get(pid);
    this.last.set(pid, { ticks, at: nowMs });
    if (!prev || nowMs <= prev.at) return null;
    return (ticks - prev.ticks) / this.hz / ((nowMs - prev.at) / 1000);
  }
}
