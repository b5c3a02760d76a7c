import { spawn as spawnChild } from 'node:child_process';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { appendFile, readdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import pty from '@lydell/node-pty';
import { writeFileAtomic } from '../util/atomic-file.js';
import { mkdirp } from '../util/fs-errors.js';
import type {
  Disposable,
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

  exec(
    argv: string[],
    opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<ExecResult> {
    return new Promise((resolve, reject) => {
      const [file, ...args] = argv;
      if (!file) return reject(new Error('exec: empty argv'));
      const child = spawnChild(file, args, {
        cwd: opts.cwd,
        env: { ...process.env, ...opts.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: opts.timeoutMs,
      });
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
    const [file, ...args] = argv;
    if (!file) throw new Error('stream: empty argv');
    const child = spawnChild(file, args, {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
    return new LocalTail(path, onChunk, opts.fromOffset ?? 0, opts.pollMs ?? 100);
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
    const b = await this.readFile(`/proc/${pid}/status`);
    return b ? b.toString('utf8') : null;
  }

  async close(): Promise<void> {}
}

/**
 * Polls size and reads only new bytes, so each byte is delivered once, in order, from any offset.
 * fs.watch is not used: it misses appends on some filesystems and cannot express "from offset N".
 */
class LocalTail implements TailHandle, Disposable {
  private timer: NodeJS.Timeout | null = null;
  /** the gap the timer was set with: refreshed while it stays, set anew when the backoff moves it */
  private delay = 0;
  private pos: number;
  /** polls in a row that found nothing new: a quiet file is looked at less often (idle CPU) */
  private quiet = 0;
  constructor(
    private readonly path: string,
    private readonly onChunk: (chunk: Buffer) => void,
    from: number,
    private readonly pollMs: number,
  ) {
    this.pos = from;
    this.poll();
    this.schedule();
  }
  /**
   * Every pollMs while the file grows; after 3 quiet polls the gap doubles up to 1 s: a run that
   * prints nothing costs a stat call a second per file, and new bytes are still seen within a
   * second (the dashboard publishes once a second anyway). A file written in bursts (a rank's stack
   * log, one dump per request) is not looked at ten times a second for a second after each: at 512
   * ranks that was a fifth of the engine's time while a hang was concluded.
   */
  private schedule(): void {
    const backoff = Math.min(1000, this.pollMs * 2 ** Math.max(0, Math.min(4, this.quiet - 3)));
    const delay = Math.max(this.pollMs, backoff);
    // the same timer again while the gap stays: a new one per poll of each of a 512-rank run's
    // thousand files lived its half second, long enough to be promoted, and was garbage after
    if (this.timer !== null && delay === this.delay) {
      this.timer.refresh();
      return;
    }
    if (this.timer !== null) clearTimeout(this.timer);
    this.delay = delay;
    this.timer = setTimeout(this.tick, delay);
    this.timer.unref?.();
  }
  private readonly tick = () => {
    const before = this.pos;
    this.poll();
    this.quiet = this.pos === before ? this.quiet + 1 : 0;
    if (this.timer !== null) this.schedule();
  };
  get offset(): number {
    return this.pos;
  }
  /** read whatever is new right now (also used for a final drain before closing) */
  poll(): void {
    // one stat a poll (not an exists check before it): at 512 ranks about a thousand files are
    // followed, every 100 ms while they grow
    let size: number;
    try {
      const st = statSync(this.path, { throwIfNoEntry: false });
      if (st === undefined) return;
      size = st.size;
    } catch {
      return;
    }
    if (size <= this.pos) return;
    const fd = openSync(this.path, 'r');
    try {
      while (this.pos < size) {
        // 1 MiB reads: the size the parsers are benchmarked with (bench/run.ts)
        const buf = Buffer.allocUnsafe(Math.min(1 << 20, size - this.pos));
        const n = readSync(fd, buf, 0, buf.length, this.pos);
        if (n <= 0) break;
        this.pos += n;
        this.onChunk(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
  }
  async drain(): Promise<void> {
    this.poll();
  }
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.poll();
  }
}
