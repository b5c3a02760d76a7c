/**
 * Each rank's process as nsa-dbg's stack hook registered it: one pid, one rank. The hook takes a
 * process's rank from its own environment (RANK, or an MPI / Slurm task's rank); a process with
 * none registers as 0 and says that it guessed (`rank_var` null in its header). Its heartbeats may
 * know better: a trainer that writes `heartbeat_rank3.jsonl` from one process is rank 3, so the
 * guess goes to the rank its pid beats as, and the run has one rank, not 0 and 3. Placed from all
 * that was seen so far, so the order in which the files are read does not change the outcome.
 */
import type { WorkerEvent } from '../ingest/events.js';

export class WorkerRanks {
  /** each rank's newest process, as placed */
  readonly byRank = new Map<number, WorkerEvent>();
  /** every registration seen (one per process: a handful, a restart or two more) */
  private readonly registered: WorkerEvent[] = [];
  /** the rank each pid's heartbeats carry (the lowest, should one pid beat as several) */
  private readonly beatRank = new Map<number, number>();
  /** pids whose rank the hook guessed */
  private readonly guessed = new Set<number>();
  /** moves whenever the placement is redone: what was derived from byRank at one version holds */
  version = 0;

  add(e: WorkerEvent): void {
    // the same process told again (its hook said which signal takes samples): the newer telling
    const again = this.registered.findIndex((r) => r.pid === e.pid && r.file === e.file);
    if (again >= 0) this.registered[again] = e;
    else this.registered.push(e);
    if (e.rankGuessed === true) this.guessed.add(e.pid);
    this.place();
  }

  /** a heartbeat record of `rank`, written by `pid` */
  beat(pid: number, rank: number): void {
    const cur = this.beatRank.get(pid);
    if (cur !== undefined && cur <= rank) return;
    this.beatRank.set(pid, rank);
    if (this.guessed.has(pid)) this.place();
  }

  private place(): void {
    this.version++;
    this.byRank.clear();
    for (const e of this.registered) {
      const rank = e.rankGuessed === true ? (this.beatRank.get(e.pid) ?? e.rank) : e.rank;
      const w = rank === e.rank ? e : { ...e, rank };
      const cur = this.byRank.get(rank);
      // a rank restarted (an elastic restart, a re-run into the same dir): the newest process
      if (cur === undefined || w.ts > cur.ts || (w.ts === cur.ts && w.pid > cur.pid))
        this.byRank.set(rank, w);
    }
  }
}
