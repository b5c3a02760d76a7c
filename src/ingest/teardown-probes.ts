/**
 * The probe file's records of a run's end (src/ingest/probes.ts reads the rest): nsa-dbg's
 * teardown snapshot and the kernel's OOM kills of ranks. The file is written by nsa-dbg but lies in
 * the run folder, so each field is checked as any file's would be.
 */
import type { GpuProcess, OomKillEvent, ProcState, TeardownEvent, TeardownRank } from './events.js';

const STATES = new Set(['R', 'S', 'D', 'T', 't', 'Z', 'X', 'I', 'W', 'P', 'K']);
/** a snapshot names at most this many ranks and GPU processes (a file is untrusted: bounded) */
const MAX_ENTRIES = 4096;

export const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export function procStateOf(v: unknown): ProcState | null {
  return typeof v === 'string' && STATES.has(v) ? (v as ProcState) : null;
}

function rankOf(v: unknown): TeardownRank | null {
  if (v === null || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  if (!finite(o.rank) || !finite(o.pid)) return null;
  const r: TeardownRank = {
    rank: o.rank,
    pid: o.pid,
    state: procStateOf(o.state),
    cpuPct: finite(o.cpuPct) ? o.cpuPct : null,
  };
  if (typeof o.wchan === 'string' && o.wchan !== '') r.wchan = o.wchan.slice(0, 100);
  return r;
}

function gpuProcessOf(v: unknown): GpuProcess | null {
  if (v === null || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  if (!finite(o.pid) || !finite(o.usedMiB)) return null;
  return { pid: o.pid, name: typeof o.name === 'string' ? o.name.slice(0, 200) : '', usedMiB: o.usedMiB };
}

export function parseTeardown(o: Record<string, unknown>): TeardownEvent | null {
  if (!finite(o.ts) || typeof o.trigger !== 'string' || !Array.isArray(o.ranks)) return null;
  const ranks = o.ranks
    .slice(0, MAX_ENTRIES)
    .map(rankOf)
    .filter((r): r is TeardownRank => r !== null);
  const ev: TeardownEvent = { kind: 'teardown', ts: o.ts, trigger: o.trigger.slice(0, 300), ranks };
  if (Array.isArray(o.gpuProcesses))
    ev.gpuProcesses = o.gpuProcesses
      .slice(0, MAX_ENTRIES)
      .map(gpuProcessOf)
      .filter((p): p is GpuProcess => p !== null);
  return ev;
}

export function parseOomKill(o: Record<string, unknown>): OomKillEvent | null {
  if (!finite(o.ts) || !finite(o.rank) || !finite(o.pid)) return null;
  const ev: OomKillEvent = {
    kind: 'oom-kill',
    ts: o.ts,
    rank: o.rank,
    pid: o.pid,
    process: typeof o.process === 'string' ? o.process.slice(0, 100) : '',
    memcg: o.memcg === true,
  };
  if (finite(o.anonRssKiB)) ev.anonRssKiB = o.anonRssKiB;
  if (finite(o.totalVmKiB)) ev.totalVmKiB = o.totalVmKiB;
  return ev;
}
