/**
 * The OOM killer's victims among a run's pids, from the kernel log of each pid's node (one command
 * per node, through the run's Target: over ssh, through srun). Whichever log is readable: dmesg
 * (often restricted to root), the journal's kernel messages, kern.log. The box's clock and uptime
 * come with it, so a line can be dated and an old kill of a reused pid left out.
 */
import { type OomKill, parseOomKills } from '../ingest/kernel-oom.js';
import type { Target } from '../targets/target.js';
import { readPerNode } from './proc-batch.js';

/** the lines that name a victim, from the first readable log, then the box's epoch and uptime */
const SCRIPT = `{ dmesg 2>/dev/null || journalctl -k -q --no-pager -o short-unix 2>/dev/null || cat /var/log/kern.log 2>/dev/null; } | grep -E 'Killed process|oom-kill:' | tail -n 500; printf '@@clock %s %s\\n@@pids %s\\n' "$(date +%s)" "$(cut -d' ' -f1 /proc/uptime)" "$*"`;

/** a victim with its kill's epoch time where the line had one */
export type DatedOomKill = OomKill & { atS: number | null };

function parseWithClock(stdout: string): Map<number, DatedOomKill> {
  const clock = /^@@clock (\d+) (\d+(?:\.\d+)?)$/m.exec(stdout);
  const bootAt = clock ? Number(clock[1]) - Number(clock[2]) : null;
  // a pid is a pid of its own node only: another node's kill of the same number is someone else
  const mine = new Set((/^@@pids (.*)$/m.exec(stdout)?.[1] ?? '').split(' ').map(Number));
  const out = new Map<number, DatedOomKill>();
  for (const [pid, k] of parseOomKills(stdout)) {
    if (!mine.has(pid)) continue;
    const atS = k.epochS ?? (k.bootS !== undefined && bootAt !== null ? bootAt + k.bootS : null);
    out.set(pid, { ...k, atS });
  }
  return out;
}

/**
 * The kills of `pids` the kernel logged at or after `sinceS` (epoch seconds; a line without a time
 * counts), on each pid's node. A node whose log cannot be read adds nothing.
 */
export async function oomKillsOf(
  target: Target,
  pids: number[],
  sinceS: number,
): Promise<Map<number, DatedOomKill>> {
  if (pids.length === 0) return new Map();
  // each node's kills are of its own pids already (parseWithClock)
  const found = await readPerNode(target, pids, SCRIPT, parseWithClock);
  return new Map([...found].filter(([, k]) => k.atS === null || k.atS >= sinceS));
}
