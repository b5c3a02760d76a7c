/**
 * Ctrl+Z and a SIGTSTP from outside (`kill -TSTP`) suspend the view the way `less` does: the
 * terminal is given back first (raw mode off, main screen, cursor shown), then the process stops
 * itself with SIGTSTP so the shell's job control takes over; on SIGCONT (`fg`) raw mode comes
 * back and the whole screen is painted again, since the shell wrote over it and reset its modes.
 * Without this a stop left the terminal raw for the shell and, after `fg`, in line mode for us.
 */
import type { FrameStdout } from './frame-stdout.js';
import type { TerminalGuard } from './terminal.js';

export class Suspender {
  private suspended = false;
  private armed = false;
  private readonly onStop = () => this.suspend();
  private readonly onContinue = () => this.resume();

  constructor(
    private readonly terminal: TerminalGuard,
    /** the frames on screen now (none while the terminal is handed to a run) */
    private readonly screen: () => FrameStdout | null,
  ) {}

  /** while a view is on screen, a SIGTSTP from outside suspends it too */
  arm(): void {
    if (this.armed) return;
    this.armed = true;
    process.on('SIGTSTP', this.onStop);
  }

  disarm(): void {
    this.armed = false;
    process.off('SIGTSTP', this.onStop);
    process.off('SIGCONT', this.onContinue);
    this.suspended = false;
  }

  suspend(): void {
    if (this.suspended || !this.armed) return;
    this.suspended = true;
    this.terminal.restore();
    // with no listener left, SIGTSTP's default action applies again: the process stops
    process.off('SIGTSTP', this.onStop);
    process.once('SIGCONT', this.onContinue);
    process.kill(process.pid, 'SIGTSTP');
    // The stop happens before kill() returns. In a process group no shell controls (an orphaned
    // one) the kernel discards SIGTSTP and no SIGCONT follows: the view comes back at once then.
    setImmediate(this.onContinue);
  }

  private resume(): void {
    if (!this.suspended) return;
    this.suspended = false;
    process.off('SIGCONT', this.onContinue);
    if (this.armed) process.on('SIGTSTP', this.onStop);
    this.terminal.enter();
    // libuv skips a mode it believes is set; restore() turned raw mode off, so this applies it
    if (process.stdin.isTTY) process.stdin.setRawMode(true);
    this.screen()?.repaint();
  }
}
