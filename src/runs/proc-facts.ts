/**
 * Process facts from /proc on the target: state letter, CPU ticks and the kernel wait channel. They
 * tell a rank spinning in Python (R, busy) from one waiting on an event or a peer (S/D, idle) and
 * from a stopped one (T), over the same connection as everything else.
 */
import { readFileSync } from 'node:fs';
import type { ProcState } from '../ingest/events.js';
import type { Target } from '../targets/target.js';

/** USER_HZ: 100 on every Linux the GPU boxes run */
const HZ = 100;

export interface ProcReading {
  state: ProcState | null;
  /** utime + stime in clock ticks */
  ticks: number | null;
  wchan: string;
}

/** /proc/PID/stat → state and CPU ticks (the command name, field 2, may hold spaces and parens). */
export function parseStat(statText: string): { state: ProcState | null; ticks: number | null } {
  const close = statText.lastIndexOf(')');
  if (close < 0) return { state: null, ticks: null };
  const rest = statText.slice(close + 2).split(' ');
  const state = /^[RSDTtZXIWPK]$/.test(rest[0] ?? '') ? (rest[0] as ProcState) : null;
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return { state, ticks: Number.isFinite(utime) && Number.isFinite(stime) ? utime + stime : null };
}

/**
 * Each pid's state letter from this machine's /proc, read synchronously: one small read per pid on
 * the engine's thread costs less than an asynchronous read, whose open, read and close each go to
 * libuv's thread pool and back (a liveness check four times a second that way was most of a loaded
 * dashboard's kernel time). A pid that is gone is absent.
 */
export function localProcStates(pids: readonly number[]): Map<number, ProcState | null> {
  const out = new Map<number, ProcState | null>();
  for (const pid of pids) {
    try {
      out.set(pid, parseStat(readFileSync(`/proc/${pid}/stat`, 'latin1')).state);
    } catch {
      // gone
    }
  }
  return out;
}

export async function readProc(target: Target, pid: number): Promise<ProcReading | null> {
  const stat = await target.readFile(`/proc/${pid}/stat`).catch(() => null);
  if (stat === null) return null;
  const wchan = await target.readFile(`/proc/${pid}/wchan`).catch(() => null);
  const w = wchan?.toString('utf8').trim() ?? '';
  return { ...parseStat(stat.toString('utf8')), wchan: w === '0' ? '' : w };
}

/** CPU % of one core between two readings of the same pid. */
export function cpuPctBetween(
  a: { ticks: number | null; atMs: number },
  b: { ticks: number | null; atMs: number },
): number | null {
  if (a.ticks === null || b.ticks === null || b.atMs <= a.atMs) return null;
  return ((b.ticks - a.ticks) / HZ / ((b.atMs - a.atMs) / 1000)) * 100;
}
