/**
 * The terminal state nsa-dbg changes and must give back however it ends (q, an exception, SIGINT,
 * SIGTERM, SIGHUP): the alternate screen (so the user's shell screen comes back and no last frame,
 * such as the quit prompt, is left behind), raw mode and the hidden cursor.
 */

const ALT_SCREEN_ON = '\x1b[?1049h';
const ALT_SCREEN_OFF = '\x1b[?1049l';
const CURSOR_SHOW = '\x1b[?25h';
const SGR_RESET = '\x1b[0m';

type In = Pick<NodeJS.ReadStream, 'isTTY' | 'isRaw' | 'setRawMode'>;
type Out = Pick<NodeJS.WriteStream, 'isTTY' | 'write'>;

export class TerminalGuard {
  private inAlt = false;

  constructor(
    private readonly stdin: In = process.stdin,
    private readonly stdout: Out = process.stdout,
  ) {}

  /** Switch to the alternate screen (again after a hand-over, which leaves it). */
  enter(): void {
    if (!this.stdout.isTTY) return;
    this.write(ALT_SCREEN_ON);
    this.inAlt = true;
  }

  /** Raw mode off, cursor shown, colours reset, back to the main screen. Safe to call twice. */
  restore(): void {
    try {
      if (this.stdin.isTTY && this.stdin.isRaw) this.stdin.setRawMode(false);
    } catch {
      // a terminal that went away (SIGHUP) has no mode left to restore
    }
    if (!this.stdout.isTTY) return;
    this.write(SGR_RESET + CURSOR_SHOW + (this.inAlt ? ALT_SCREEN_OFF : ''));
    this.inAlt = false;
  }

  private write(s: string): void {
    try {
      // a TTY write is synchronous on POSIX, so this is on screen before process.exit
      this.stdout.write(s);
    } catch {
      // EIO after a hang-up: nothing to restore on a terminal that is gone
    }
  }
}
