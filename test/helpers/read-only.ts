import { spawn, spawnSync } from 'node:child_process';
import type { CliResult } from './cli.js';
import { BIN } from './cli.js';

/**
 * Read-only storage for a test, without touching this machine's mounts: a private mount namespace
 * (`unshare -rm`: a user namespace too, so no root is needed where user namespaces are allowed)
 * with a tmpfs over a temp folder, filled from `seed` and then remounted read-only.
 */
export function readOnlyAvailable(): boolean {
  return (
    spawnSync('unshare', ['-rm', 'sh', '-c', 'd=$(mktemp -d) && mount -t tmpfs t "$d" && umount "$d"'])
      .status === 0
  );
}

/**
 * A shell line (for `sh -c` inside the namespace) that mounts `dir` as a tmpfs holding a copy of
 * `seed`'s files, makes it read-only now or (with `trigger`) once that file exists, then runs
 * `command`. The trigger lets a test turn the folder read-only under a program already running;
 * `<trigger>.done` appears once it is.
 */
export function readOnlyScript(
  dir: string,
  command: string,
  o: { seed?: string; trigger?: string } = {},
): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const ro = `mount -o remount,ro ${q(dir)}`;
  return [
    'set -e',
    `mount -t tmpfs nsa-ro ${q(dir)}`,
    ...(o.seed ? [`cp -a ${q(o.seed)}/. ${q(dir)}/`] : []),
    // `<trigger>.done` says the folder is read-only now
    o.trigger
      ? `(while [ ! -e ${q(o.trigger)} ]; do sleep 0.05; done; ${ro}; : > ${q(`${o.trigger}.done`)}) &`
      : ro,
    command,
  ].join('\n');
}

/** `nsa-dbg ARGS` with `dir` read-only (see readOnlyScript) */
export function runCliReadOnly(
  dir: string,
  args: string[],
  o: { seed?: string; env?: Record<string, string>; cwd?: string } = {},
): Promise<CliResult> {
  const command = `exec ${[process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-rm', 'sh', '-c', readOnlyScript(dir, command, { seed: o.seed })], {
      cwd: o.cwd,
      env: { ...process.env, ...o.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
