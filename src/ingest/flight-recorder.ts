/**
 * PyTorch's Flight Recorder dumps (`nccl_trace_rank_N`, written on a collective timeout when
 * TORCH_NCCL_TRACE_BUFFER_SIZE and TORCH_NCCL_DUMP_ON_TIMEOUT are set: the bundled NCCL lanes do):
 * each rank's last collectives, per process group. Read into what a verdict needs: per rank and
 * group, the last collective it enqueued, started and completed, and the newest entries.
 */
import type { Frame } from './events.js';
import { type PickleValue, readPickle } from './pickle.js';

export const FLIGHT_RECORDER_FILE = /^nccl_trace_rank_(\d+)$/;

export interface FlightRecorderEntry {
  seq: number;
  pg: string;
  op: string;
  state: string;
  frames: Frame[];
}

export interface FlightRecorderEvent {
  kind: 'flight-recorder';
  rank: number;
  file: string;
  /** process group id → its description (`default_pg`) */
  groups: Record<string, string>;
  /** per process group: the last collective enqueued, started and completed (-1: none) */
  status: Record<string, { enqueued: number; started: number; completed: number }>;
  /** the newest entries, oldest first */
  entries: FlightRecorderEntry[];
}

const KEEP = 8;
type Obj = { [k: string]: PickleValue };
const obj = (v: PickleValue | undefined): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null;
const num = (v: PickleValue | undefined, d = -1) =>
  typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : d;
const str = (v: PickleValue | undefined) => (typeof v === 'string' ? v : '');

/** a dump's bytes → the event, or null while it is incomplete; throws on what is not a dump */
export function parseFlightRecorder(bytes: Buffer, file: string): FlightRecorderEvent | null {
  let v: PickleValue;
  try {
    v = readPickle(bytes);
  } catch (e) {
    if ((e as Error).message === 'the pickle is cut off') return null;
    throw e;
  }
  const d = obj(v);
  const base = file.slice(file.lastIndexOf('/') + 1);
  const m = FLIGHT_RECORDER_FILE.exec(base);
  if (d === null || m === null || !Array.isArray(d.entries))
    throw new Error(`${file}: not a Flight Recorder dump`);
  const groups: Record<string, string> = {};
  for (const [id, g] of Object.entries(obj(d.pg_config) ?? {})) groups[id] = str(obj(g)?.desc) || id;
  const status: FlightRecorderEvent['status'] = {};
  for (const [id, g] of Object.entries(obj(d.pg_status) ?? {})) {
    const o = obj(g);
    status[id] = {
      enqueued: num(o?.last_enqueued_collective),
      started: num(o?.last_started_collective),
      completed: num(o?.last_completed_collective),
    };
  }
  const entries = (d.entries as PickleValue[]).slice(-KEEP).map((e): FlightRecorderEntry => {
    const o = obj(e) ?? {};
    const pg = Array.isArray(o.process_group) ? str(o.process_group[0]) : str(o.pg_id as PickleValue);
    return {
      seq: num(o.collective_seq_id),
      pg: pg || String(num(o.pg_id, 0)),
      op: str(o.profiling_name),
      state: str(o.state),
      frames: (Array.isArray(o.frames) ? o.frames : [])
        .map((f) => obj(f))
        .filter((f): f is Obj => f !== null)
        .map((f) => ({ file: str(f.filename), line: num(f.line, 0), function: str(f.name) }))
        .reverse(),
    };
  });
  return { kind: 'flight-recorder', rank: Number(m[1]), file, groups, status, entries };
}

export interface MissedCollective {
  /** the ranks that never entered it */
  ranks: number[];
  pg: string;
  seq: number;
  op: string;
  /** the ranks waiting in it, and its state there (scheduled, started) */
  waiting: number[];
  state: string;
  /** where the waiting ranks called it (their innermost user frame) */
  frame: Frame | null;
}

/**
 * Which rank missed which collective: per process group, the newest collective any rank enqueued;
 * the ranks whose own last one is older never entered it, and the others wait there.
 */
export function missedCollectives(dumps: FlightRecorderEvent[]): MissedCollective[] {
  const out: MissedCollective[] = [];
  const pgs = new Set(dumps.flatMap((d) => Object.keys(d.status)));
  for (const pg of [...pgs].sort()) {
    const last = dumps.map((d) => ({ d, enq: d.status[pg]?.enqueued ?? -1 }));
    const seq = Math.max(...last.map((x) => x.enq));
    const waiting = last.filter((x) => x.enq === seq).map((x) => x.d);
    const behind = last.filter((x) => x.enq < seq).map((x) => x.d.rank);
    if (behind.length === 0 || seq < 0) continue;
    const entry = waiting.flatMap((d) => d.entries).find((e) => e.pg === pg && e.seq === seq);
    const user = entry?.frames.find((f) => !/site-packages|dist-packages|\/torch\//.test(f.file)) ?? null;
    out.push({
      ranks: behind.sort((a, b) => a - b),
      pg: waiting[0]?.groups[pg] ?? pg,
      seq,
      op: entry?.op ?? 'a collective',
      waiting: waiting.map((d) => d.rank).sort((a, b) => a - b),
      state: entry?.state ?? '',
      frame: user,
    });
  }
  return out;
}
