/**
 * A memory cgroup of the test's own, for a real OOM kill that hurts nothing else: a child of this
 * process's cgroup with a small limit (cgroup v1 `memory.limit_in_bytes`, v2 `memory.max`). Needs
 * root and a writable cgroup tree, and a readable kernel log (`dmesg`) to find the kill in; null
 * where any of these is missing (the test that needs it is skipped, and says why).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function makeMemcg(name: string, limitBytes: number): { dir: string; remove: () => void } | null {
  if (process.getuid?.() !== 0) return null;
  if (spawnSync('dmesg', ['--help'], { stdio: 'ignore' }).status !== 0) return null;
  if ((spawnSync('sh', ['-c', 'dmesg | tail -n 1'], { encoding: 'utf8' }).stdout ?? '') === '') return null;
  const lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  const v1 = lines.map((l) => /^\d+:([^:]*\bmemory\b[^:]*):(.*)$/.exec(l)).find((m) => m !== null);
  const v2 = lines.map((l) => /^0::(.*)$/.exec(l)).find((m) => m !== null);
  const candidates: Array<[string, string]> = [];
  if (v1) candidates.push([join('/sys/fs/cgroup', v1[1]!, v1[2]!, name), 'memory.limit_in_bytes']);
  if (v2) candidates.push([join('/sys/fs/cgroup', v2[1]!, name), 'memory.max']);
  for (const [dir, limit] of candidates) {
    try {
      if (!existsSync(dir)) mkdirSync(dir);
      writeFileSync(join(dir, limit), String(limitBytes));
      return {
        dir,
        remove: () => {
          try {
            rmdirSync(dir);
          } catch {
            // still holding a process that is being reaped: the next run reuses it
          }
        },
      };
    } catch {
      try {
        rmdirSync(dir);
      } catch {
        // not made, or not empty
      }
    }
  }
  return null;
}
