import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run the built CLI as a user would, with a private NSA_DBG_HOME. */
export function runCli(
  args: string[],
  opts: {
    env?: Record<string, string>;
    cwd?: string;
    timeoutMs?: number;
    /** SIGTERM first at this time (a headless run then reports what it knew), SIGKILL at timeoutMs */
    termMs?: number;
    onSpawn?: (pid: number) => void;
  } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid) opts.onSpawn?.(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    const term = opts.termMs === undefined ? undefined : setTimeout(() => child.kill('SIGTERM'), opts.termMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      clearTimeout(term);
      resolve({ code, stdout, stderr });
    });
  });
}
