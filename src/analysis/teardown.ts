/**
 * What nsa-dbg's own teardown snapshot saw (src/session/teardown-snapshot.ts records it), for the
 * verdict's JSON and a clause of its summary: "when rank 2 exited, ranks 0 and 1 were in state S
 * (wchan futex_wait_queue, 0% CPU)". The last words say where in the code each rank was; this says
 * what the kernel saw of it a moment before it was stopped: asleep (waiting for a peer), running
 * (busy in its own work), or in D (stuck in the kernel, e.g. on a file system or a driver).
 */
import type { GpuProcess, OomKillEvent, TeardownRank } from '../ingest/events.js';
import { rankSetText } from '../util/rank-set.js';
import type { EvidenceState } from './evidence-state.js';

export interface TeardownReport {
  /** when it was taken (trainer clock, epoch seconds) */
  at: number;
  /** the sign of teardown that set it off */
  trigger: string;
  /** every rank known then; `state: null` for one already gone */
  ranks: TeardownRank[];
  gpuProcesses?: GpuProcess[];
}

/**
 * the verdict's `teardown` (the run's first snapshot: nsa-dbg takes one; a folder re-run into may
 * hold more) and `oomKills` fields, present only when there is something in them
 */
export function teardownField(s: EvidenceState): { teardown?: TeardownReport; oomKills?: OomKillEvent[] } {
  const t = [...s.teardowns].sort((a, b) => a.ts - b.ts)[0];
  const oom = [...oomKillsOf(s).values()].sort((a, b) => a.rank - b.rank);
  const teardown: TeardownReport | undefined = t && {
    at: t.ts,
    trigger: t.trigger,
    ranks: [...t.ranks].sort((a, b) => a.rank - b.rank),
    ...(t.gpuProcesses ? { gpuProcesses: t.gpuProcesses } : {}),
  };
  return { ...(teardown ? { teardown } : {}), ...(oom.length ? { oomKills: oom } : {}) };
}

/** each rank's OOM kill by the kernel (the newest per rank) */
export function oomKillsOf(s: EvidenceState): Map<number, OomKillEvent> {
  const out = new Map<number, OomKillEvent>();
  for (const e of s.oomKills) out.set(e.rank, e);
  return out;
}

const STATE_WORDS: Partial<Record<string, string>> = {
  R: 'running',
  S: 'sleeping',
  D: 'uninterruptible',
  T: 'stopped',
  t: 'traced',
};

/**
 * "when rank 2 exited, ranks 0 and 1 were in state S (sleeping, wchan futex_do_wait, 0% CPU)"; ranks with
 * the same state and wchan and like CPU (under 20 % or not) go together. Empty when no rank was
 * alive any more (one signal to the whole group, `timeout` or `scancel`, leaves nothing to see).
 */
export function teardownSummary(t: TeardownReport | null, crashRank?: number): string {
  if (t === null) return '';
  // the crashed rank's own state says nothing (it is exiting); the others' is the finding
  const alive = t.ranks.filter(
    (r) => r.rank !== crashRank && r.state !== null && r.state !== 'Z' && r.state !== 'X',
  );
  if (alive.length === 0) return '';
  const groups = new Map<string, TeardownRank[]>();
  for (const r of alive) {
    // an unmeasured CPU % (the second reading missed) joins whichever group shares state and wchan
    const key = `${r.state}|${r.wchan ?? ''}|${r.cpuPct !== null && r.cpuPct >= 20 ? 'busy' : 'idle'}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  // nvidia-smi's processes at that moment, by pid: what each rank still held on its GPU
  const gpuMiB = new Map((t.gpuProcesses ?? []).map((p) => [p.pid, p.usedMiB]));
  const span = (vs: number[], unit: string) => {
    const lo = Math.round(Math.min(...vs));
    const hi = Math.round(Math.max(...vs));
    return vs.length === 0 ? '' : lo === hi ? `${lo}${unit}` : `${lo}–${hi}${unit}`;
  };
  const parts: string[] = [];
  for (const rs of groups.values()) {
    const r = rs[0]!;
    const cpu = span(
      rs.map((x) => x.cpuPct).filter((p): p is number => p !== null),
      '% CPU',
    );
    const held = rs.map((x) => gpuMiB.get(x.pid)).filter((m): m is number => m !== undefined);
    const gpu = span(held, ` MiB on ${rs.length > 1 ? 'their GPUs' : 'its GPU'}`);
    const facts = [STATE_WORDS[r.state!] ?? '', r.wchan ? `wchan ${r.wchan}` : '', cpu, gpu].filter(Boolean);
    const who = rankSetText(rs.map((x) => x.rank));
    parts.push(`${who} ${rs.length > 1 ? 'were' : 'was'} in state ${r.state} (${facts.join(', ')})`);
  }
  return `when ${t.trigger}, ${parts.join(', ')}`;
}

/** "31 GiB RSS" from the kernel's anon-rss (kB: KiB): what the process held when it was killed */
export function rssText(kib: number): string {
  const gib = kib / 1024 / 1024;
  if (gib >= 10) return `${Math.round(gib)} GiB RSS`;
  if (gib >= 1) return `${gib.toFixed(1)} GiB RSS`;
  return `${Math.max(1, Math.round(kib / 1024))} MiB RSS`;
}
