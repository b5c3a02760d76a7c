import type { Target } from '../targets/target.js';

/**
 * Signal numbers are Linux's (the GPU boxes are Linux). SigCgt in /proc/PID/status is a hex mask
 * whose bit N-1 is set when signal N has a handler installed.
 */
export const SIGNUM: Record<string, number> = {
  HUP: 1,
  INT: 2,
  ABRT: 6,
  KILL: 9,
  USR1: 10,
  SEGV: 11,
  TERM: 15,
};

/** `SIGUSR1` for 10; undefined for a number we do not name */
export function signalName(signum: number): string | undefined {
  const hit = Object.entries(SIGNUM).find(([, n]) => n === signum);
  return hit ? `SIG${hit[0]}` : undefined;
}

export function catchesSignal(sigCgtHex: string, signum: number): boolean {
  const mask = BigInt(`0x${sigCgtHex.trim() || '0'}`);
  return ((mask >> BigInt(signum - 1)) & 1n) === 1n;
}

export interface ProcInfo {
  pid: number;
  ppid: number;
  sigCgt: string;
  name: string;
}

/** One pass over /proc on the target (cat survives processes vanishing mid-listing; awk may not). */
const PS_SCRIPT =
  "cat /proc/[0-9]*/status 2>/dev/null | awk '/^Name:/{n=$2} /^Pid:/{p=$2} /^PPid:/{pp=$2} /^SigCgt:/{print p, pp, $2, n}'";

export function parseProcTable(text: string): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const line of text.split('\n')) {
    const [pid, ppid, sigCgt, name] = line.trim().split(/\s+/);
    if (!pid || !ppid || !sigCgt) continue;
    out.push({ pid: Number(pid), ppid: Number(ppid), sigCgt, name: name ?? '' });
  }
  return out;
}

/** root and all its descendants, root first */
export function processTree(procs: ProcInfo[], root: number): ProcInfo[] {
  const byParent = new Map<number, ProcInfo[]>();
  for (const p of procs) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const out: ProcInfo[] = [];
  const rootInfo = procs.find((p) => p.pid === root);
  if (!rootInfo) return out;
  const queue = [rootInfo];
  while (queue.length) {
    const p = queue.shift()!;
    out.push(p);
    queue.push(...(byParent.get(p.pid) ?? []));
  }
  return out;
}

export async function listProcesses(target: Target): Promise<ProcInfo[]> {
  const r = await target.exec(['sh', '-c', PS_SCRIPT], { timeoutMs: 5000 });
  return parseProcTable(r.stdout);
}

/**
 * The processes under `root` that have a handler for `signum`. Sending SIGUSR1 to a process without
 * one would kill it (the default action is terminate), so a dump request only goes to these.
 */
export async function handlersFor(target: Target, root: number, signum: number): Promise<ProcInfo[]> {
  return processTree(await listProcesses(target), root).filter((p) => catchesSignal(p.sigCgt, signum));
}
