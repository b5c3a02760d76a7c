/**
 * The environment and argv of a process as the kernel holds them (/proc/PID/environ and cmdline,
 * read on the box where it runs): what the trainer actually started with, whatever a wrapper
 * script, `env -i`, torchrun or srun did to the env it was given. A run's flags are proven applied
 * from these, never from what nsa-dbg meant to pass.
 */
import type { Target } from '../targets/target.js';
import { readPerNode } from './proc-batch.js';

export interface ProcessStart {
  pid: number;
  env: Record<string, string>;
  argv: string[];
}

/** NUL-separated NAME=VALUE entries → a map (the first `=` splits; a value may hold more) */
export function parseEnviron(bytes: Buffer): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of bytes.toString('utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/** NUL-separated argv (the last entry ends with a NUL too) */
export function parseCmdline(bytes: Buffer): string[] {
  const parts = bytes.toString('utf8').split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** per pid: `@@ PID`, base64 of its environ, `@@a`, base64 of its cmdline (nothing for one gone) */
const READ_SCRIPT =
  'for p in "$@"; do e=$(base64 < /proc/$p/environ 2>/dev/null | tr -d "\\n") || continue; a=$(base64 < /proc/$p/cmdline 2>/dev/null | tr -d "\\n"); printf "@@ %s\\n%s\\n@@a %s\\n" "$p" "$e" "$a"; done';

export function parseEnvironBatch(text: string): Map<number, ProcessStart> {
  const out = new Map<number, ProcessStart>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const head = /^@@ (\d+)$/.exec(lines[i] ?? '');
    const args = /^@@a ?(.*)$/.exec(lines[i + 2] ?? '');
    if (!head || !args) continue;
    const pid = Number(head[1]);
    out.set(pid, {
      pid,
      env: parseEnviron(Buffer.from(lines[i + 1] ?? '', 'base64')),
      argv: parseCmdline(Buffer.from(args[1] ?? '', 'base64')),
    });
    i += 2;
  }
  return out;
}

/** the start of each pid that is still there, one command per node on a remote target */
export function readProcessStarts(target: Target, pids: number[]): Promise<Map<number, ProcessStart>> {
  return readPerNode(target, pids, READ_SCRIPT, parseEnvironBatch, async (pid) => {
    const env = await target.readFile(`/proc/${pid}/environ`).catch(() => null);
    const argv = await target.readFile(`/proc/${pid}/cmdline`).catch(() => null);
    return env === null ? null : { pid, env: parseEnviron(env), argv: argv ? parseCmdline(argv) : [] };
  });
}
