/**
 * Learning the pid of a command started over an exec channel. OpenSSH ignores (or refuses) channel
 * `signal` requests in many setups, so stopping a command means `kill`ing it by pid; the launcher
 * prints `NSA_DBG_PID=<pid>` as the first stderr line (stdout stays the command's own), and this
 * sniffer strips that line before stderr is passed on. sshd starts each command in its own session,
 * so the pid is also the process group: killing `-pid` takes its children too.
 */

import { PID_MARKER, shJoin } from './sh-quote.js';

export class PidSniffer {
  pid: number | null = null;
  private head = Buffer.alloc(0);
  private done = false;

  constructor(private readonly passOn: (chunk: Buffer) => void) {}

  write(chunk: Buffer): void {
    if (this.done) {
      this.passOn(chunk);
      return;
    }
    this.head = Buffer.concat([this.head, chunk]);
    const nl = this.head.indexOf(10);
    if (nl < 0 && this.head.length < 256) return;
    this.done = true;
    const line = this.head.subarray(0, nl < 0 ? this.head.length : nl).toString('latin1');
    const m = new RegExp(`^${PID_MARKER}(\\d+)$`).exec(line);
    if (m) this.pid = Number(m[1]);
    const rest = m ? this.head.subarray(nl + 1) : this.head;
    this.head = Buffer.alloc(0);
    if (rest.length) this.passOn(rest);
  }

  /** anything held back when the stream ended without a newline */
  end(): void {
    if (!this.done && this.head.length) this.passOn(this.head);
    this.done = true;
  }
}

/** A command line that SIGKILLs the command's process group (falling back to the pid). */
export function killCommand(pid: number): string {
  return `kill -KILL -- -${pid} 2>/dev/null || ${shJoin(['kill', '-KILL', String(pid)])}`;
}
