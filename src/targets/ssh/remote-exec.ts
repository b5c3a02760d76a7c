/**
 * One command on an exec channel (no PTY), with its pid learned from the first stderr line so it
 * can be killed by pid: OpenSSH does not reliably honour channel `signal` requests, and closing
 * the channel does not stop a command that never writes.
 */

import type { ClientChannel } from 'ssh2';
import { NoRetry, type SshConnection } from './connection.js';
import { SshError } from './errors.js';
import { killCommand, PidSniffer } from './remote-pid.js';
import { shCommand } from './sh-quote.js';

export interface RemoteProcess {
  /** SIGKILL the command's process group; `exited` then resolves with code null */
  kill(): void;
  /** exit code (null: killed or ended by a signal); rejects SshError when the link was lost */
  exited: Promise<number | null>;
}

export interface StartOptions {
  cwd?: string;
  env?: Record<string, string>;
  onStdout: (chunk: Buffer) => void;
  onStderr: (chunk: Buffer) => void;
  /** how long to wait for a down link before giving up */
  downTimeoutMs: number;
  /** for messages */
  shown: string;
  /** bytes for the command's stdin, which is then closed (default: left open, unused) */
  stdin?: Buffer;
}

/**
 * SIGKILL a remote process group on an exec channel of its own (closing a channel does not stop a
 * command that never writes). A link that is gone leaves nothing to do: errors are dropped.
 */
export function killRemoteGroup(conn: SshConnection, pid: number, downTimeoutMs: number): void {
  void conn
    .withClient(
      (client) =>
        new Promise<void>((resolve) => {
          client.exec(killCommand(pid), (err, ch) => {
            if (err) return resolve();
            ch.on('close', () => resolve());
            ch.resume();
            ch.stderr.resume();
          });
        }),
      downTimeoutMs,
    )
    .catch(() => {});
}

/** after kill(), how long to wait for sshd to report the exit before letting go of the channel */
const KILL_GRACE_MS = 3000;

export function startRemote(conn: SshConnection, argv: string[], o: StartOptions): RemoteProcess {
  let command: string;
  try {
    command = shCommand(argv, { printPid: 'stderr', cwd: o.cwd, env: o.env });
  } catch (err) {
    return { kill: () => {}, exited: Promise.reject(err) };
  }
  let killed = false;
  let channel: ClientChannel | null = null;
  let finish: ((code: number | null) => void) | null = null;
  const sniffer = new PidSniffer(o.onStderr);

  const killByPid = () => {
    if (sniffer.pid !== null) killRemoteGroup(conn, sniffer.pid, o.downTimeoutMs);
  };

  const kill = () => {
    if (killed) return;
    killed = true;
    if (!channel) return; // not started yet: it is stopped as soon as it is
    killByPid();
    const ch = channel;
    setTimeout(() => {
      ch.close();
      finish?.(null);
    }, KILL_GRACE_MS).unref?.();
  };

  const exited = conn.withClient(
    (client) =>
      new Promise<number | null>((resolve, reject) => {
        if (killed) return resolve(null);
        client.exec(command, (err, ch) => {
          if (err) return reject(err); // never opened: withClient retries on the next link
          channel = ch;
          if (o.stdin !== undefined) ch.end(o.stdin);
          let exit: { code: number | null } | null = null;
          let settled = false;
          finish = (code) => {
            if (settled) return;
            settled = true;
            resolve(code);
          };
          ch.on('data', (b: Buffer) => o.onStdout(b));
          ch.stderr.on('data', (b: Buffer) => {
            const hadPid = sniffer.pid !== null;
            sniffer.write(b);
            if (killed && !hadPid && sniffer.pid !== null) killByPid();
          });
          ch.on('exit', (code: number | null) => {
            exit = { code: typeof code === 'number' ? code : null };
          });
          ch.on('close', () => {
            sniffer.end();
            if (killed) return finish?.(null);
            if (exit) return finish?.(exit.code);
            settled = true;
            reject(
              new NoRetry(new SshError('down', `connection to ${conn.label} lost while running ${o.shown}`)),
            );
          });
          if (killed) {
            killed = false; // kill() before the channel opened: run it now
            kill();
          }
        });
      }),
    o.downTimeoutMs,
  );
  return { kill, exited };
}
