/**
 * The GPU box over SSH, behind the same Target interface as this machine. All channels share one
 * SshConnection. Commands are quoted with shQuote and run by `sh -c`; env goes in as `export`s.
 * Files go over SFTP, or over exec channels when the box's sshd has no SFTP (FilesOverSsh).
 * Every promise rejects (SshError 'down') when the link stays down past downTimeoutMs; tails
 * instead wait and resume from their offset.
 */

import type {
  ExecOptions,
  ExecResult,
  PtyHandle,
  SpawnPtyOptions,
  StreamHandle,
  StreamOptions,
  TailHandle,
  TailOptions,
  Target,
} from '../target.js';
import { CommandShells } from './command-shells.js';
import type { SshConnection } from './connection.js';
import { type Limit, runCommand } from './exec-files.js';
import { startRemote } from './remote-exec.js';
import { FilesOverSsh } from './remote-files.js';
import { RemoteTail } from './remote-tail.js';
import { shJoin, shQuotePath, shScript } from './sh-quote.js';
import { openPty } from './ssh-pty.js';

export interface SshTargetOptions {
  /** how long an operation waits for a down link before rejecting (default 20 s) */
  downTimeoutMs?: number;
}

/** A counting semaphore: keeps bursts of execs under sshd's per-connection session limit. */
function limiter(max: number): Limit {
  let active = 0;
  const queue: Array<() => void> = [];
  return async (fn) => {
    if (active >= max) await new Promise<void>((r) => queue.push(r));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      queue.shift()?.();
    }
  };
}

function checkPid(pid: number): string {
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`invalid pid: ${pid}`);
  return String(pid);
}

export class SshTarget implements Target {
  readonly kind = 'ssh' as const;
  readonly label: string;
  private readonly downTimeoutMs: number;
  private readonly limit: Limit;
  /** short commands without a login shell each: see command-shell.ts */
  readonly shells: CommandShells;
  private readonly tails = new Set<TailHandle>();
  /** file operations: SFTP, or exec channels on a box without it */
  readonly files: FilesOverSsh;

  constructor(
    readonly connection: SshConnection,
    opts: SshTargetOptions = {},
  ) {
    this.label = connection.label;
    this.downTimeoutMs = opts.downTimeoutMs ?? 20_000;
    // shells and exec channels together stay under sshd's MaxSessions (10) beside the PTY, SFTP
    // and the streams
    this.limit = limiter(4);
    this.shells = new CommandShells(connection, this.downTimeoutMs);
    this.files = new FilesOverSsh(
      connection,
      this.downTimeoutMs,
      (dir) => this.mkdirp(dir),
      this.limit,
      this.shells,
    );
  }

  spawnPty(opts: SpawnPtyOptions): Promise<PtyHandle> {
    return openPty(this.connection, opts, this.downTimeoutMs);
  }

  async exec(argv: string[], opts: ExecOptions = {}): Promise<ExecResult> {
    const r = await runCommand(this.connection, this.shells, this.limit, {
      ...opts,
      script: shScript(argv, { cwd: opts.cwd, env: opts.env, inline: true }),
      argv,
      shown: shJoin(argv),
      downTimeoutMs: this.downTimeoutMs,
    });
    return { stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8'), code: r.code };
  }

  stream(argv: string[], onStdout: (chunk: Buffer) => void, opts: StreamOptions = {}): StreamHandle {
    const proc = startRemote(this.connection, argv, {
      cwd: opts.cwd,
      env: opts.env,
      shown: shJoin(argv),
      downTimeoutMs: this.downTimeoutMs,
      onStdout,
      onStderr: (b) => opts.onStderr?.(b),
    });
    const done = proc.exited.catch((err: Error) => {
      // like ssh(1): 255 when the command could not run, or lost its link, for connection reasons
      opts.onStderr?.(Buffer.from(`${err.message}\n`));
      return 255;
    });
    return { kill: () => proc.kill(), done };
  }

  async readFile(path: string): Promise<Buffer | null> {
    if (path.startsWith('/proc/')) {
      // /proc files report size 0, so SFTP's readFile would come back empty; cat reads them properly
      const r = await this.exec(['cat', path]);
      return r.code === 0 ? Buffer.from(r.stdout, 'utf8') : null;
    }
    return this.files.readFile(path);
  }

  /** Atomic: a temp file next to it, then renamed over the target. */
  writeFile(path: string, data: string | Buffer): Promise<void> {
    return this.files.writeFile(path, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  }

  private async mkdirp(dir: string): Promise<void> {
    const r = await this.exec(['sh', '-c', `mkdir -p -- ${shQuotePath(dir)}`]);
    if (r.code !== 0) throw new Error(`mkdir -p ${dir} failed on ${this.label}: ${r.stderr.trim()}`);
  }

  listDir(path: string): Promise<string[]> {
    return this.files.listDir(path);
  }

  tail(path: string, onChunk: (chunk: Buffer) => void, opts: TailOptions = {}): TailHandle {
    const t = new RemoteTail(this.connection, this.files, path, onChunk, {
      drainTimeoutMs: this.downTimeoutMs,
      fromOffset: opts.fromOffset,
      pollMs: opts.pollMs,
    });
    this.tails.add(t);
    const dispose = t.dispose.bind(t);
    t.dispose = () => {
      this.tails.delete(t);
      dispose();
    };
    return t;
  }

  async signal(pid: number, sig: string): Promise<void> {
    const name = sig.replace(/^SIG/i, '').toUpperCase();
    if (!/^[A-Z0-9+-]+$/.test(name)) throw new Error(`invalid signal: ${sig}`);
    const r = await this.exec(['kill', `-${name}`, checkPid(pid)]);
    if (r.code !== 0) throw new Error(`kill -${name} ${pid} failed on ${this.label}: ${r.stderr.trim()}`);
  }

  async isAlive(pid: number): Promise<boolean> {
    const status = await this.procStatus(pid);
    if (status !== null) return !/^State:\s+Z/m.test(status); // a zombie has exited
    const r = await this.exec(['kill', '-0', checkPid(pid)]);
    return r.code === 0;
  }

  async procStatus(pid: number): Promise<string | null> {
    return (await this.readFile(`/proc/${checkPid(pid)}/status`))?.toString('utf8') ?? null;
  }

  async close(): Promise<void> {
    for (const t of [...this.tails]) t.dispose();
    this.shells.close();
    await this.connection.close();
  }
}
