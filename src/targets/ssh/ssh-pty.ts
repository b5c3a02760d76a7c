/**
 * A PTY on the remote box: an exec channel with a pty request. The launcher script prints the
 * shell's pid before `exec`-ing the program, so the handle knows the remote pid; that line is not
 * passed on. Output arriving before anyone subscribed is buffered, not lost.
 */

import { StringDecoder } from 'node:string_decoder';
import type { ClientChannel } from 'ssh2';
import { debugLog } from '../../util/debug-log.js';
import type { Disposable, PtyHandle, SpawnPtyOptions } from '../target.js';
import { NoRetry, type SshConnection } from './connection.js';
import { SshError } from './errors.js';
import { PID_MARKER, shCommand } from './sh-quote.js';

type ExitInfo = { exitCode: number | null; signal?: number | string | null };

const PID_LINE = new RegExp(`${PID_MARKER}(\\d+)\\r?\\n`);

export function openPty(conn: SshConnection, opts: SpawnPtyOptions, timeoutMs: number): Promise<PtyHandle> {
  const command = shCommand(opts.argv, { printPid: 'stdout', cwd: opts.cwd, env: opts.env });
  const cols = opts.cols ?? 120;
  const rows = opts.rows ?? 40;
  return conn.withClient(
    (client) =>
      new Promise<PtyHandle>((resolve, reject) => {
        debugLog(`pty on ${conn.label}: opening (${opts.argv[0] ?? ''})`);
        let channel: ClientChannel | null = null;
        let remote: RemotePty | null = null;
        let timedOut = false;
        // from the request on, not from the channel's opening: a box that never answers the
        // request must not leave the caller (a blank screen waiting for the run's terminal) waiting
        const timer = setTimeout(() => {
          timedOut = true;
          channel?.close();
          debugLog(
            `pty on ${conn.label}: no start within ${timeoutMs} ms (channel ${channel ? 'open' : 'never opened'}${remote ? `; ${remote.seen()}` : ''})`,
          );
          reject(
            new NoRetry(new SshError('timeout', `PTY on ${conn.label} did not start within ${timeoutMs} ms`)),
          );
        }, timeoutMs);
        client.exec(command, { pty: { term: 'xterm-256color', cols, rows } }, (err, ch) => {
          if (err) {
            clearTimeout(timer);
            return reject(err); // not opened: withClient retries on the next link
          }
          // opened after the caller gave up: nobody will ever read it
          if (timedOut) return ch.close();
          channel = ch;
          remote = new RemotePty(
            ch,
            (pty) => {
              clearTimeout(timer);
              debugLog(`pty on ${conn.label}: started (pid ${pty.pid})`);
              resolve(pty);
            },
            (e) => {
              clearTimeout(timer);
              reject(new NoRetry(e));
            },
          );
        });
      }),
    timeoutMs,
  );
}

class RemotePty implements PtyHandle {
  pid = -1;
  private readonly decoder = new StringDecoder('utf8');
  private head = '';
  private readonly pending: string[] = [];
  private readonly dataCbs = new Set<(d: string) => void>();
  private readonly exitCbs = new Set<(e: ExitInfo) => void>();
  private exit: ExitInfo | null = null;

  constructor(
    private readonly channel: ClientChannel,
    ready: (h: PtyHandle) => void,
    failed: (e: Error) => void,
  ) {
    let exitSeen: ExitInfo | null = null;
    channel.on('exit', (code: number | null, signal?: string) => {
      exitSeen = { exitCode: code ?? null, signal: signal ?? null };
    });
    channel.on('data', (buf: Buffer) => {
      const text = this.decoder.write(buf);
      if (this.pid >= 0) return this.emit(text);
      this.head += text;
      const m = PID_LINE.exec(this.head);
      if (!m) return;
      this.pid = Number(m[1]);
      const rest = this.head.slice(m.index + m[0].length);
      this.head = '';
      if (rest) this.emit(rest);
      ready(this);
    });
    channel.stderr.on('data', (buf: Buffer) => this.emit(buf.toString('utf8')));
    channel.on('close', () => {
      if (this.pid < 0)
        failed(new SshError('down', `PTY closed before the program started: ${this.head.trim()}`));
      this.exit = exitSeen ?? { exitCode: null, signal: null };
      for (const cb of this.exitCbs) cb(this.exit);
    });
  }

  /** what came before the pid line (for the engine log when it never comes) */
  seen(): string {
    return `${this.head.length} chars before a pid line: ${JSON.stringify(this.head.slice(0, 200))}`;
  }

  private emit(text: string): void {
    if (!text) return;
    if (this.dataCbs.size === 0) {
      this.pending.push(text);
      return;
    }
    for (const cb of this.dataCbs) cb(text);
  }

  onData(cb: (data: string) => void): Disposable {
    this.dataCbs.add(cb);
    if (this.pending.length) cb(this.pending.splice(0).join(''));
    return { dispose: () => this.dataCbs.delete(cb) };
  }

  onExit(cb: (e: ExitInfo) => void): Disposable {
    if (this.exit) {
      const e = this.exit;
      queueMicrotask(() => cb(e));
      return { dispose: () => {} };
    }
    this.exitCbs.add(cb);
    return { dispose: () => this.exitCbs.delete(cb) };
  }

  write(data: string): void {
    if (!this.exit) this.channel.write(data);
  }

  resize(cols: number, rows: number): void {
    // ssh2 takes rows first (window-change is rows, cols, height, width)
    if (!this.exit) this.channel.setWindow(rows, cols, 0, 0);
  }

  close(): void {
    if (!this.exit) this.channel.close();
  }
}
