/**
 * The kernel's OOM-killer lines, as dmesg, `journalctl -k` and kern.log print them, by pid. Two lines
 * name a victim (one kernel may print either or both):
 *
 *   Out of memory: Killed process 1234 (python3) total-vm:40123456kB, anon-rss:32505856kB, file-rss:…
 *   Memory cgroup out of memory: Killed process 1234 (python3) total-vm:…, anon-rss:…kB, …
 *   oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,…,task=python3,pid=1234,uid=0
 *
 * (kernels before 5.x: "Killed process 1234 (python3) total-vm:…" after "Out of memory: Kill
 * process 1234 (python3) score 900 or sacrifice child"). The line's time, where it has one: dmesg's
 * seconds since boot (`[26198.163955]`) or journalctl's `-o short-unix` epoch seconds.
 */

import type { OomKillEvent } from './events.js';

/** a victim as the kernel's lines tell it (the event's facts and the line's time) */
export interface OomKill
  extends Pick<OomKillEvent, 'pid' | 'process' | 'anonRssKiB' | 'totalVmKiB' | 'memcg'> {
  /** seconds since boot (dmesg) */
  bootS?: number;
  /** epoch seconds (journalctl -o short-unix) */
  epochS?: number;
}

const KILLED = /Killed process (\d+) \(([^)]*)\)(.*)$/;
const OOM_KILL = /oom-kill:(\S*)/;
const DMESG_TIME = /^\s*\[\s*(\d+\.\d+)\]/;
const UNIX_TIME = /^(\d{9,}\.\d+) /;

function kib(rest: string, field: string): number | undefined {
  const m = new RegExp(`${field}:(\\d+)kB`).exec(rest);
  return m ? Number(m[1]) : undefined;
}

/** every victim in the text, by pid (a pid's lines merged: the memcg flag from either) */
export function parseOomKills(text: string): Map<number, OomKill> {
  const out = new Map<number, OomKill>();
  const at = (line: string): Pick<OomKill, 'bootS' | 'epochS'> => {
    const d = DMESG_TIME.exec(line);
    if (d) return { bootS: Number(d[1]) };
    const u = UNIX_TIME.exec(line);
    return u ? { epochS: Number(u[1]) } : {};
  };
  for (const line of text.split('\n')) {
    const k = KILLED.exec(line);
    if (k !== null && !/\bKill process\b/.test(line)) {
      const pid = Number(k[1]);
      const prev = out.get(pid);
      const rest = k[3]!;
      const anon = kib(rest, 'anon-rss');
      const vm = kib(rest, 'total-vm');
      out.set(pid, {
        ...prev,
        ...at(line),
        pid,
        process: k[2]!,
        memcg: (prev?.memcg ?? false) || /Memory cgroup out of memory/.test(line),
        ...(anon === undefined ? {} : { anonRssKiB: anon }),
        ...(vm === undefined ? {} : { totalVmKiB: vm }),
      });
      continue;
    }
    const o = OOM_KILL.exec(line);
    if (o === null) continue;
    const fields = new Map(
      o[1]!.split(',').map((kv) => {
        const i = kv.indexOf('=');
        return [kv.slice(0, i), kv.slice(i + 1)] as const;
      }),
    );
    const pid = Number(fields.get('pid'));
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const prev = out.get(pid);
    out.set(pid, {
      ...at(line),
      ...prev,
      pid,
      process: prev?.process ?? fields.get('task') ?? '',
      memcg: (prev?.memcg ?? false) || fields.get('constraint') === 'CONSTRAINT_MEMCG',
    });
  }
  return out;
}
