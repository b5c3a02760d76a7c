import { spawn as spawnChild } from 'node:child_process';
import { appendFile, readdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import pty from '@lydell/node-pty';
import { writeFileAtomic } from '../util/atomic-file.js';
import { mkdirp } from '../util/fs-errors.js';
import { LocalTail } from './local-tail.js';
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
} from './target.js';

/** This machine. PTYs come from node-pty (prebuilt binaries, no compiler needed). */
export class LocalTarget implements Target {
  readonly label = 'local';
  readonly kind = 'local' as const;

  async spawnPty(opts: SpawnPtyOptions): Promise<PtyHandle> {
    const [file, ...args] = opts.argv;
    if (!file) throw new Error('spawnPty: empty argv');
    const p = pty.spawn(file, args, {
      name: 'xterm-256color',
      cols: opts.cols ?? 120,
      rows: opts.rows ?? 40,
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env } as Record<string, string>,
    });
    let exited = false;
    p.onExit(() => {
      exited = true;
    });
    return {
      pid: p.pid,
      onData: (cb) => p.onData(cb),
      onExit: (cb) => p.onExit(({ exitCode, signal }) => cb({ exitCode, signal: signal ?? null })),
      write: (d) => {
        if (!exited) p.write(d);
      },
      // resize() after exit throws (ESRCH/EBADF): guard it.
      resize: (c, r) => {
        if (!exited) p.resize(c, r);
      },
      close: () => {
        if (!exited) p.kill();
      },
    };
  }

  exec(argv: string[], opts: ExecOptions = {}): Promise<ExecResult> {
    return new Promise((resolve, reject) => {
      const child = spawnPiped('exec', argv, opts, opts.timeoutMs);
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => out.push(c));
      child.stderr.on('data', (c: Buffer) => err.push(c));
      child.on('error', reject);
      child.on('close', (code) =>
        resolve({
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          code,
        }),
      );
    });
  }

  stream(argv: string[], onStdout: (chunk: Buffer) => void, opts: StreamOptions = {}): StreamHandle {
    const child = spawnPiped('stream', argv, opts);
    child.stdout.on('data', onStdout);
    child.stderr.on('data', (c: Buffer) => opts.onStderr?.(c));
    const done = new Promise<number | null>((resolve) => {
      child.on('error', (e) => {
        opts.onStderr?.(Buffer.from(`${(e as Error).message}\n`));
        resolve(127);
      });
      child.on('close', (code) => resolve(code));
    });
    return { kill: () => child.kill('SIGTERM'), done };
  }

  async readFile(path: string): Promise<Buffer | null> {
    try {
      return await readFile(path);
    } catch {
      return null;
    }
  }

  /** Atomic: a reader never sees half a file. */
  async appendFile(path: string, data: string): Promise<void> {
    await appendFile(path, data);
  }

  async writeFile(path: string, data: string | Buffer): Promise<void> {
    await mkdirp(dirname(path));
    writeFileAtomic(path, data, { durable: false });
  }

  async listDir(path: string): Promise<string[]> {
    try {
      return await readdir(path);
    } catch {
      return [];
    }
  }

  tail(path: string, onChunk: (chunk: Buffer) => void, opts: TailOptions = {}): TailHandle {
    return new LocalTail(path, onChunk, opts.fromOffset ?? 0, opts.pollMs ?? 100, opts.appendOnly === true);
  }

  async signal(pid: number, sig: string): Promise<void> {
    process.kill(pid, `SIG${sig.replace(/^SIG/, '')}` as NodeJS.Signals);
  }

  async isAlive(pid: number): Promise<boolean> {
    try {
      process.kill(pid, 0);
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
    // a zombie (exited, not yet reaped) still answers kill 0
    const st = await this.procStatus(pid);
    return !st || !/^State:\s+Z/m.test(st);
  }

  async procStatus(pid: number): Promise<string | null> {
    return (await this.readFile(`/proc/${pid}/status`))?.toString('utf8') ?? null;
  }

  async close(): Promise<void> {}
}

/** argv without a PTY, stdout and stderr piped (`what` names the caller in an error) */
function spawnPiped(what: string, argv: string[], opts: StreamOptions, timeout?: number) {
  const [file, ...args] = argv;
  if (!file) throw new Error(`${what}: empty argv`);
  return spawnChild(file, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout,
  });
}
