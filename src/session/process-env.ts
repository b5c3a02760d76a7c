/**
 * Each rank's process start (env and argv from /proc, on its box), read once as soon as the rank's
 * pid is known from its stack hook record or heartbeat: a process must still be there to be read,
 * so this runs on every chunk of evidence that brings a new pid and on every check tick, never
 * waits for the end of the run.
 */
import { type ProcessStart, readProcessStarts } from '../runs/proc-environ.js';
import type { Target } from '../targets/target.js';
import type { LiveModel } from './live-model.js';

export interface RankStart extends ProcessStart {
  rank: number;
}

export class ProcessEnvWatch {
  private readonly read = new Map<number, RankStart>();
  /** pids asked for (read or gone): each is asked once */
  private readonly asked = new Set<number>();
  private pending: Promise<void> = Promise.resolve();
  /** the pid map looked through last (every chunk calls check: at 512 ranks, thousands a second) */
  private lastSeen: ReadonlyMap<number, number> | null = null;

  constructor(
    private readonly target: Target,
    private readonly model: LiveModel,
  ) {}

  /** read the ranks whose pid is new since the last call */
  check(): void {
    // the model hands out the same map until its evidence changes: nothing new to look through
    const pids = this.model.rankPids;
    if (pids === this.lastSeen) return;
    this.lastSeen = pids;
    const fresh = [...pids].filter(([, pid]) => !this.asked.has(pid));
    if (fresh.length === 0) return;
    for (const [, pid] of fresh) this.asked.add(pid);
    this.pending = this.pending.then(async () => {
      const got = await readProcessStarts(
        this.target,
        fresh.map(([, pid]) => pid),
      ).catch(() => new Map<number, ProcessStart>());
      for (const [rank, pid] of fresh) {
        const start = got.get(pid);
        if (start) this.read.set(rank, { ...start, rank });
      }
    });
  }

  /** every rank read so far, by rank, once the reads in flight are done */
  async starts(): Promise<RankStart[]> {
    await this.pending;
    return [...this.read.values()].sort((a, b) => a.rank - b.rank);
  }
}
