/**
 * Which node each rank of a multi-node run lives on, from `nodes.jsonl` in the run dir. Each srun
 * task (one torchrun agent per node) appends a line for itself when it starts, and one per worker
 * once torchrun has started it (read from the worker's own environment: RANK, LOCAL_RANK), so the
 * map holds for any torchrun version and any rendezvous order (c10d gives group ranks in join
 * order, not task order). Lines that are not such records are counted and skipped.
 */
import { parseJsonObject } from '../util/json-object.js';

export interface AgentRecord {
  task: number;
  node: string;
  /** the torchrun agent's pid (never signalled) */
  pid: number;
}

export interface WorkerRecord extends AgentRecord {
  rank: number;
  localRank: number;
}

export type RankPlace = Pick<WorkerRecord, 'node' | 'task' | 'localRank'>;

const int = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** one line → an agent or a worker record, or null */
export function parseNodeLine(line: string): AgentRecord | WorkerRecord | null {
  const o = parseJsonObject(line);
  if (o === null || !int(o.task) || !int(o.pid) || typeof o.node !== 'string' || o.node === '') return null;
  const agent: AgentRecord = { task: o.task, node: o.node, pid: o.pid };
  if (o.rank === undefined) return agent;
  if (!int(o.rank) || !int(o.localRank)) return null;
  return { ...agent, rank: o.rank, localRank: o.localRank };
}

export class NodeMap {
  private readonly byRank = new Map<number, WorkerRecord>();
  private readonly byTaskLocal = new Map<string, number>();
  private partial = '';
  skipped = 0;

  /** ranks per node, for output printed before the worker records are in */
  constructor(private readonly nprocPerNode = 1) {}

  /** a chunk of nodes.jsonl (lines may be split across chunks) */
  push(chunk: string): void {
    const text = this.partial + chunk;
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      const r = parseNodeLine(line);
      if (r === null) this.skipped++;
      else this.add(r);
    }
  }

  add(r: AgentRecord | WorkerRecord): void {
    // an agent's own record says nothing a rank's does not: its ranks place themselves
    if (!('rank' in r)) return;
    this.byRank.set(r.rank, r);
    this.byTaskLocal.set(`${r.task}:${r.localRank}`, r.rank);
  }

  /**
   * local rank of a task's agent → global rank. Until the worker records are in, the usual layout
   * (agent order = node order); the records replace it as soon as they arrive.
   */
  globalRank(task: number, localRank: number): number {
    const known = this.byTaskLocal.get(`${task}:${localRank}`);
    return known ?? (this.firstRankOf(task) ?? task * this.nprocPerNode) + localRank;
  }

  /**
   * The first global rank of a task's workers, from any one of them: torchrun numbers an agent's
   * workers consecutively (its group's offset + local rank), so a worker the watcher never saw (one
   * that died within its first second) is still placed by a sibling's record.
   */
  private firstRankOf(task: number): number | undefined {
    for (const w of this.byRank.values()) if (w.task === task) return w.rank - w.localRank;
    return undefined;
  }

  /** whether a worker of this task (agent) has a record: its output's local ranks can be placed */
  placesTask(task: number): boolean {
    return this.firstRankOf(task) !== undefined;
  }

  placeOf(rank: number): RankPlace | undefined {
    const w = this.byRank.get(rank);
    if (w !== undefined) return { node: w.node, task: w.task, localRank: w.localRank };
    for (const sib of this.byRank.values()) {
      const first = sib.rank - sib.localRank;
      if (rank >= first && rank < first + this.nprocPerNode)
        return { node: sib.node, task: sib.task, localRank: rank - first };
    }
    return undefined;
  }

  /** the node a worker pid runs on (pids repeat across nodes: only the workers' own records say) */
  nodeOfPid(pid: number, rank?: number): string | null {
    if (rank !== undefined) {
      const w = this.byRank.get(rank);
      if (w !== undefined && w.pid === pid) return w.node;
    }
    let found: string | null = null;
    for (const w of this.byRank.values()) {
      if (w.pid !== pid) continue;
      if (found !== null && found !== w.node) return null; // the same pid on two nodes: ambiguous
      found = w.node;
    }
    return found;
  }
}
