/**
 * A few command shells (command-shell.ts) on one SSH connection, opened as commands need them. A
 * command goes to a free shell, or waits for one; one that has waited OVERFLOW_MS (every shell held
 * by a slow command: a 2-minute preflight measurement, a py-spy dump) is handed back and takes an
 * exec channel of its own, as before the shells existed. Waiting first matters: while the shells
 * are being opened (a login each), sending the burst of first commands to exec channels would start
 * a login per command and slow everything down together. A box where the loop cannot start (a
 * restricted shell, no mktemp) turns the shells off for the connection.
 */

import type { ClientChannel } from 'ssh2';
import { encodeRequest, MAX_SHELL_STDIN, ReplyReader, SHELL_LOOP, type ShellReply } from './command-shell.js';
import type { SshConnection } from './connection.js';
import { NoRetry } from './connection.js';
import { CommandTimeoutError, SshError } from './errors.js';
import { killRemoteGroup } from './remote-exec.js';
import { shJoin } from './sh-quote.js';

/** Use an exec channel for this command: the loop cannot run on this box, or no shell came free. */
export class ShellUnavailable extends Error {}

/** The link went before the loop took the request: the command never ran, so it is sent again. */
class NotStarted extends Error {}

/** how long a command waits for a free shell before it takes an exec channel */
const OVERFLOW_MS = 1500;
/** command shells kept open on a connection */
const MAX_SHELLS = 3;

interface Job {
  script: string;
  shown: string;
  stdin?: Buffer;
  timeoutMs?: number;
  resolve: (r: ShellReply) => void;
  reject: (e: Error) => void;
  overflow?: NodeJS.Timeout;
}

class CommandShell {
  busy = false;
  dead = false;
  private pending: (Pick<Job, 'shown' | 'resolve' | 'reject'> & { id: number }) | null = null;
  private nextId = 1;

  constructor(
    private readonly channel: ClientChannel,
    readonly pid: number,
    private readonly reader: ReplyReader,
    private readonly label: string,
    private readonly onDead: (shell: CommandShell) => void,
    private readonly onIdle: () => void,
  ) {}

  receive(replies: ShellReply[]): void {
    for (const r of replies) {
      const p = this.pending;
      if (!p || p.id !== r.id) continue;
      this.pending = null;
      this.busy = false;
      p.resolve(r);
    }
    if (this.reader.broken) this.die(new SshError('down', this.reader.broken));
    else if (!this.busy) this.onIdle();
  }

  die(err: Error): void {
    if (this.dead) return;
    this.dead = true;
    this.busy = true; // never handed out again
    this.onDead(this);
    const p = this.pending;
    this.pending = null;
    p?.reject(err);
    this.channel.close();
  }

  lost(): void {
    const p = this.pending;
    const shown = p?.shown ?? 'a command';
    if (p && this.reader.started < p.id) this.die(new NotStarted());
    else this.die(new SshError('down', `connection to ${this.label} lost while running ${shown}`));
  }

  run(script: string, shown: string, stdin?: Buffer): Promise<ShellReply> {
    this.busy = true;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending = { id, shown, resolve, reject };
      this.channel.write(encodeRequest(id, script, stdin));
    });
  }
}

export class CommandShells {
  private readonly shells = new Set<CommandShell>();
  private readonly queue: Job[] = [];
  private opening = 0;
  private unavailable = false;
  private closed = false;

  constructor(
    private readonly conn: SshConnection,
    private readonly downTimeoutMs: number,
  ) {}

  /**
   * Run a POSIX-sh script on a shell. Null when the shells are off (or the stdin too big for a
   * request line); rejects ShellUnavailable when the caller should use an exec channel after all,
   * SshError 'down' when the link is lost, CommandTimeoutError after timeoutMs of running (the
   * shell, and the command with it, is then killed).
   */
  run(script: string, shown: string, timeoutMs?: number, stdin?: Buffer): Promise<ShellReply> | null {
    if (this.unavailable || this.closed || (stdin?.length ?? 0) > MAX_SHELL_STDIN) return null;
    return new Promise<ShellReply>((resolve, reject) => {
      const job: Job = { script, shown, stdin, timeoutMs, resolve, reject };
      const overflow = () => {
        const at = this.queue.indexOf(job);
        if (at < 0) return;
        // a shell is on its way (its login bounded by the link timeout): waiting for it costs less
        // than another login
        if (this.opening > 0) {
          job.overflow = setTimeout(overflow, OVERFLOW_MS);
          return;
        }
        this.queue.splice(at, 1);
        reject(new ShellUnavailable('no command shell came free'));
      };
      job.overflow = setTimeout(overflow, OVERFLOW_MS);
      this.queue.push(job);
      this.dispatch();
    });
  }

  close(): void {
    this.closed = true;
    const err = new SshError('closed', `connection to ${this.conn.label} closed`);
    for (const s of [...this.shells]) s.die(err);
    for (const job of this.queue.splice(0)) this.fail(job, err);
  }

  /** hand queued jobs to free shells; open another shell while some wait and there is room */
  private dispatch(): void {
    for (const shell of this.shells) {
      if (this.queue.length === 0) return;
      if (!shell.busy) this.start(shell, this.queue.shift()!);
    }
    if (this.queue.length > this.opening && this.shells.size + this.opening < MAX_SHELLS) void this.open();
  }

  private fail(job: Job, err: Error): void {
    clearTimeout(job.overflow);
    job.reject(err);
  }

  private start(shell: CommandShell, job: Job): void {
    clearTimeout(job.overflow);
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    if (job.timeoutMs) {
      const ms = job.timeoutMs;
      timer = setTimeout(() => {
        if (done) return;
        done = true;
        job.reject(new CommandTimeoutError(job.shown, ms));
        this.killShell(shell);
      }, ms);
    }
    shell.run(job.script, job.shown, job.stdin).then(
      (r) => {
        clearTimeout(timer);
        if (done) return;
        done = true;
        job.resolve(r);
      },
      (err: Error) => {
        clearTimeout(timer);
        if (done) return;
        done = true;
        if (err instanceof NotStarted) {
          // a link cut under a request the loop never took: it waits for a shell on the next link
          this.queue.unshift(job);
          this.dispatch();
          return;
        }
        job.reject(err);
      },
    );
  }

  /** the command holds the shell past its time: kill the shell's process group, command included */
  private killShell(shell: CommandShell): void {
    shell.die(new Error('killed'));
    killRemoteGroup(this.conn, shell.pid, this.downTimeoutMs);
  }

  private async open(): Promise<void> {
    this.opening++;
    let shell: CommandShell;
    try {
      shell = await this.conn.withClient((client) => this.openOn(client), this.downTimeoutMs);
    } catch (err) {
      this.opening--;
      // the loop cannot run here: every command, waiting or to come, takes an exec channel
      if (err instanceof ShellUnavailable) this.unavailable = true;
      for (const job of this.queue.splice(0)) this.fail(job, err as Error);
      return;
    }
    this.opening--;
    if (this.closed) {
      shell.die(new SshError('closed', `connection to ${this.conn.label} closed`));
      return;
    }
    this.shells.add(shell);
    this.dispatch();
  }

  private openOn(client: import('ssh2').Client): Promise<CommandShell> {
    return new Promise<CommandShell>((resolve, reject) => {
      client.exec(shJoin(['sh', '-c', SHELL_LOOP]), (err, ch) => {
        if (err) return reject(err); // never opened: retried on the next link
        const reader = new ReplyReader();
        let shell: CommandShell | null = null;
        let exited = false;
        ch.stderr.resume();
        ch.on('exit', () => {
          exited = true;
        });
        ch.on('data', (b: Buffer) => {
          const replies = reader.push(b);
          if (shell) return shell.receive(replies);
          if (reader.pid !== null) {
            shell = new CommandShell(
              ch,
              reader.pid,
              reader,
              this.conn.label,
              (s) => this.shells.delete(s),
              () => this.dispatch(),
            );
            resolve(shell);
          } else if (reader.broken) {
            ch.close();
            reject(new NoRetry(new ShellUnavailable(reader.broken)));
          }
        });
        ch.on('close', () => {
          if (shell) return shell.lost();
          // the loop ended before it was ready: this box cannot run it. Without an exit status
          // the link went: withClient tries again on the next one
          if (exited)
            reject(
              new NoRetry(new ShellUnavailable(`the command shell did not start on ${this.conn.label}`)),
            );
          else reject(new SshError('down', `connection to ${this.conn.label} lost`));
        });
      });
    });
  }
}
