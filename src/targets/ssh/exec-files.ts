/**
 * File operations as POSIX-sh commands on exec channels, for boxes whose sshd has no SFTP. Bytes
 * travel as the channel's raw stdout (or stdin for writes), never through a text decoding, so what
 * arrives is exactly what the file holds. Paths are quoted with shQuotePath (a leading `~/` still
 * expands).
 */

import { randomBytes } from 'node:crypto';
import { type CommandShells, ShellUnavailable } from './command-shells.js';
import type { SshConnection } from './connection.js';
import { CommandTimeoutError } from './errors.js';
import { type StartOptions, startRemote } from './remote-exec.js';
import type { RemoteFiles } from './remote-files.js';
import { shQuotePath } from './sh-quote.js';

/** exit status the scripts use for "no such file or folder" (cat and tail never exit with it) */
const MISSING = 44;

export type Limit = <T>(fn: () => Promise<T>) => Promise<T>;

/**
 * A command on one of the target's command shells, or on an exec channel of its own (every shell
 * busy, or none can run on this box) under the target's cap on channels: `script` is what a shell
 * runs, `argv` (in `cwd`, with `env`) what a channel runs. `stdout`: what it printed, unless
 * `onStdout` took it (at once, or as it came).
 */
export async function runCommand(
  conn: SshConnection,
  shells: CommandShells,
  limit: Limit,
  o: Omit<StartOptions, 'onStdout' | 'onStderr'> & { script: string; argv: string[]; timeoutMs?: number } & {
    onStdout?: (b: Buffer) => void;
  },
): Promise<{ code: number | null; stdout: Buffer; stderr: Buffer }> {
  const onShell = shells.run(o.script, o.shown, o.timeoutMs, o.stdin);
  if (onShell) {
    try {
      const r = await onShell;
      // whole: a link lost before the reply leaves the caller's offset where it was
      if (o.onStdout && r.stdout.length) o.onStdout(r.stdout);
      return { code: r.code, stdout: o.onStdout ? Buffer.alloc(0) : r.stdout, stderr: r.stderr };
    } catch (err) {
      if (!(err instanceof ShellUnavailable)) throw err;
    }
  }
  return limit(async () => {
    const out: Buffer[] = [];
    const errOut: Buffer[] = [];
    const proc = startRemote(conn, o.argv, {
      ...o,
      onStdout: o.onStdout ?? ((b) => out.push(b)),
      onStderr: (b) => errOut.push(b),
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      if (!o.timeoutMs) return;
      const ms = o.timeoutMs;
      timer = setTimeout(() => {
        proc.kill();
        reject(new CommandTimeoutError(o.shown, ms));
      }, ms);
    });
    try {
      const code = await Promise.race([proc.exited, timedOut]);
      return { code, stdout: Buffer.concat(out), stderr: Buffer.concat(errOut) };
    } finally {
      clearTimeout(timer);
    }
  });
}

export class ExecFiles implements RemoteFiles {
  /** size requests waiting for the next batched look (one exec for every tailed file) */
  private pending = new Map<string, Waiter[]>();
  private pendingWaitMs = 0;
  private batchTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly conn: SshConnection,
    private readonly downTimeoutMs: number,
    /** the target's cap on concurrent exec channels (sshd's MaxSessions counts these too) */
    private readonly limit: Limit,
    /** short scripts without stdin go through these when they have room (see command-shell.ts) */
    private readonly shells: CommandShells,
  ) {}

  private async run(
    script: string,
    o: { onStdout?: (b: Buffer) => void; stdin?: Buffer; linkWaitMs?: number } = {},
  ): Promise<{ code: number | null; stderr: string; stdout: Buffer }> {
    const r = await runCommand(this.conn, this.shells, this.limit, {
      script,
      argv: ['sh', '-c', script],
      shown: script.split('\n')[0]!,
      downTimeoutMs: o.linkWaitMs ?? this.downTimeoutMs,
      stdin: o.stdin,
      onStdout: o.onStdout,
    });
    return { code: r.code, stderr: r.stderr.toString('utf8').trim(), stdout: r.stdout };
  }

  private fail(what: string, path: string, r: { code: number | null; stderr: string }): Error {
    return new Error(`${what} ${path} on ${this.conn.label} failed (exit ${r.code}): ${r.stderr}`);
  }

  async readFile(path: string): Promise<Buffer | null> {
    const q = shQuotePath(path);
    const r = await this.run(`[ -e ${q} ] || exit ${MISSING}\nexec cat -- ${q}`);
    if (r.code === MISSING) return null;
    if (r.code !== 0) throw this.fail('reading', path, r);
    return r.stdout;
  }

  async writeFile(path: string, data: Buffer): Promise<void> {
    const q = shQuotePath(path);
    const tmp = shQuotePath(`${path}.tmp-${randomBytes(4).toString('hex')}`);
    // the bytes come on stdin; the rename makes the new content appear at once, as over SFTP
    const script = [
      `p=${q}; t=${tmp}`,
      'mkdir -p -- "$(dirname -- "$p")" && cat > "$t" && mv -f -- "$t" "$p" || { rm -f -- "$t"; exit 1; }',
    ].join('\n');
    const r = await this.run(script, { stdin: data });
    if (r.code !== 0) throw this.fail('writing', path, r);
  }

  async listDir(path: string): Promise<string[]> {
    const q = shQuotePath(path);
    // NUL-separated: names may hold newlines; the three globs cover dot files but not . and ..
    const script = [
      `if ! cd -- ${q} 2>/dev/null; then [ -e ${q} ] || exit ${MISSING}; echo "not a readable folder" >&2; exit 1; fi`,
      `for f in * .[!.]* ..?*; do if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\\0' "$f"; fi; done`,
    ].join('\n');
    const r = await this.run(script);
    if (r.code === MISSING) return [];
    if (r.code !== 0) throw this.fail('listing', path, r);
    return r.stdout
      .toString('utf8')
      .split('\0')
      .filter((n) => n !== '');
  }

  async readFrom(
    path: string,
    offset: number,
    onPiece: (piece: Buffer) => void,
    linkWaitMs: number,
  ): Promise<void> {
    // most looks find nothing new: ask the size first, in a batch shared by every tail
    const size = await this.sizeOf(path, linkWaitMs);
    if (size === null || size <= offset) return;
    const q = shQuotePath(path);
    // tail reads to the end it finds and exits; each piece is handed over as it arrives, so a link
    // lost halfway leaves the caller's offset at exactly the bytes it got
    const r = await this.run(`[ -f ${q} ] || exit 0\nexec tail -c +${offset + 1} -- ${q}`, {
      onStdout: onPiece,
      linkWaitMs,
    });
    if (r.code !== 0) throw this.fail('reading', path, r);
  }

  /**
   * The size of a regular file (null: missing or not a regular file). Requests made within a few
   * milliseconds of each other share one command, so N idle tails cost one exec per poll, not N.
   */
  sizeOf(path: string, linkWaitMs: number): Promise<number | null> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(path);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(path, [{ resolve, reject }]);
      this.pendingWaitMs = Math.max(this.pendingWaitMs, linkWaitMs);
      this.batchTimer ??= setTimeout(() => void this.lookUpSizes(), BATCH_MS);
    });
  }

  private async lookUpSizes(): Promise<void> {
    const batch = this.pending;
    const linkWaitMs = this.pendingWaitMs;
    this.pending = new Map();
    this.pendingWaitMs = 0;
    this.batchTimer = null;
    const paths = [...batch.keys()];
    const words = paths.map(shQuotePath).join(' ');
    try {
      const r = await this.run(
        `for p in ${words}; do if [ -f "$p" ]; then wc -c < "$p" 2>/dev/null || echo -; else echo -; fi; done`,
        { linkWaitMs },
      );
      // one line per path, in order, whatever each file's state
      if (r.code !== 0) throw this.fail('sizing', paths.join(' '), r);
      const lines = r.stdout.toString('utf8').split('\n');
      paths.forEach((p, i) => {
        for (const w of batch.get(p) ?? []) w.resolve(parseSize(lines[i]));
      });
    } catch (err) {
      // a lost link fails every look of the batch, as each would have failed alone
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err as Error);
    }
  }
}

interface Waiter {
  resolve: (size: number | null) => void;
  reject: (err: Error) => void;
}

/** how long size requests are gathered into one command */
const BATCH_MS = 20;

function parseSize(line: string | undefined): number | null {
  const n = Number.parseInt((line ?? '').trim(), 10);
  return Number.isFinite(n) && n >= 0 ? n : null;
}
