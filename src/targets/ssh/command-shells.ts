/**
 * A few command shells (command-shell.ts) on one SSH connection, opened as commands need them. A
 * command goes to a free shell; with none free and the pool full it is not queued behind a slow one
 * (a 2-minute preflight measurement, a py-spy dump): `run` returns null and the caller uses an exec
 * channel of its own, as before the shells existed. A box where the loop cannot start (a restricted
 * shell, no mktemp) turns the shells off for the connection, and every command takes an exec
 * channel.
 */

import type { ClientChannel } from 'ssh2';
import { encodeRequest, ReplyReader, SHELL_LOOP, type ShellReply } from './command-shell.js';
import type { SshConnection } from './connection.js';
import { NoRetry } from './connection.js';
import { CommandTimeoutError, SshError } from './errors.js';
import { killCommand } from './remote-pid.js';
import { shJoin } from './sh-quote.js';

/** The loop could not start on this box: use exec channels. */
export class ShellUnavailable extends Error {}

interface Pending {
  id: number;
  shown: string;
  resolve: (r: ShellReply) => void;
  reject: (e: Error) => void;
}

class CommandShell {
  busy = false;
  dead = false;
  private pending: Pending | null = null;
  private nextId = 1;

  constructor(
    private readonly channel: ClientChannel,
    readonly pid: number,
    private readonly reader: ReplyReader,
    private readonly label: string,
    private readonly onDead: (shell: CommandShell) => void,
  ) {}

  /** replies and the channel's end, wired once the ready line was read */
  receive(replies: ShellReply[]): void {
    for (const r of replies) {
      const p = this.pending;
      if (!p || p.id !== r.id) continue;
      this.pending = null;
      this.busy = false;
      p.resolve(r);
    }
    if (this.reader.broken) this.die(new SshError('down', this.reader.broken));
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
    const shown = this.pending?.shown ?? 'a command';
    this.die(new SshError('down', `connection to ${this.label} lost while running ${shown}`));
  }

  run(script: string, shown: string): Promise<ShellReply> {
    this.busy = true;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending = { id, shown, resolve, reject };
      this.channel.write(encodeRequest(id, script));
    });
  }
}

export class CommandShells {
  private readonly shells = new Set<CommandShell>();
  private opening = 0;
  private unavailable = false;
  private closed = false;

  constructor(
    private readonly conn: SshConnection,
    private readonly downTimeoutMs: number,
    private readonly max = 3,
  ) {}

  /**
   * Run a POSIX-sh script on a free shell (opening one when the pool has room). Null when every
   * shell is busy and the pool is full, or the box cannot run the loop: use an exec channel.
   * Rejects SshError 'down' when the link is lost, CommandTimeoutError after timeoutMs (the shell,
   * and the command with it, is then killed).
   */
  run(script: string, shown: string, timeoutMs?: number): Promise<ShellReply> | null {
    if (this.unavailable || this.closed) return null;
    const free = [...this.shells].find((s) => !s.busy);
    if (free) return this.withTimeout(free, free.run(script, shown), shown, timeoutMs);
    if (this.shells.size + this.opening >= this.max) return null;
    return this.open().then((shell) => this.withTimeout(shell, shell.run(script, shown), shown, timeoutMs));
  }

  close(): void {
    this.closed = true;
    for (const s of [...this.shells])
      s.die(new SshError('closed', `connection to ${this.conn.label} closed`));
  }

  private withTimeout(
    shell: CommandShell,
    reply: Promise<ShellReply>,
    shown: string,
    timeoutMs?: number,
  ): Promise<ShellReply> {
    if (!timeoutMs) return reply;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new CommandTimeoutError(shown, timeoutMs)); // first: the race settles with it
        this.killShell(shell);
      }, timeoutMs);
    });
    return Promise.race([reply, timedOut]).finally(() => clearTimeout(timer));
  }

  /** the command holds the shell past its time: kill the shell's process group, command included */
  private killShell(shell: CommandShell): void {
    shell.die(new Error('killed'));
    void this.conn
      .withClient(
        (client) =>
          new Promise<void>((resolve) => {
            client.exec(killCommand(shell.pid), (err, ch) => {
              if (err) return resolve();
              ch.on('close', () => resolve());
              ch.resume();
              ch.stderr.resume();
            });
          }),
        this.downTimeoutMs,
      )
      .catch(() => {});
  }

  private async open(): Promise<CommandShell> {
    this.opening++;
    try {
      const shell = await this.conn.withClient(
        (client) =>
          new Promise<CommandShell>((resolve, reject) => {
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
                  shell = new CommandShell(ch, reader.pid, reader, this.conn.label, (s) =>
                    this.shells.delete(s),
                  );
                  resolve(shell);
                } else if (reader.broken) {
                  ch.close();
                  reject(new NoRetry(new ShellUnavailable(reader.broken)));
                }
              });
              ch.on('close', () => {
                if (shell) return shell.lost();
                // the loop ended before it was ready: this box cannot run it. Without an exit
                // status the link went: withClient tries again on the next one
                if (exited)
                  reject(
                    new NoRetry(
                      new ShellUnavailable(`the command shell did not start on ${this.conn.label}`),
                    ),
                  );
                else reject(new SshError('down', `connection to ${this.conn.label} lost`));
              });
            });
          }),
        this.downTimeoutMs,
      );
      if (this.closed) {
        shell.die(new SshError('closed', `connection to ${this.conn.label} closed`));
        throw new SshError('closed', `connection to ${this.conn.label} closed`);
      }
      this.shells.add(shell);
      return shell;
    } catch (err) {
      if (err instanceof ShellUnavailable) this.unavailable = true;
      throw err;
    } finally {
      this.opening--;
    }
  }
}
