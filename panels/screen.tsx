/**
 * The one way a full-screen view runs, for the dashboard and the notebook alike: on the alternate
 * screen, frames through a FrameWriter (only the changed cells, absolute cursor positions: Ink 6.8's
 * own incremental mode moved the cursor relatively and left stale lines in tmux), Ink's console
 * patching off, and a loop that can hand the whole terminal to a run's own PTY (`t`) and come back
 * to the same view. Every way out gives the terminal back the same way: Ink is unmounted first (its
 * final frame lands on the alternate screen, cursor and raw mode restored), then the main screen
 * comes back; a frame drawn after that would stay on the user's screen.
 * - quit: `onQuit`, then exit 0;
 * - SIGINT/SIGTERM/SIGHUP: the terminal first, then `onSignal` (a second signal exits at once),
 *   exit 128 + signal;
 * - an uncaught exception or a render error: the terminal first, then `onFatal`, the error on the
 *   main screen, exit 1.
 */
import { render } from 'ink';
import type { ReactElement } from 'react';
import type { SessionController } from '../src/session/state.js';
import { FrameStdout } from './frame-stdout.js';
import { handOver } from './hand-over.js';
import { installFastOutput } from './ink-fast-output.js';
import { installBoundedTextCaches } from './ink-text-caches.js';
import { Suspender } from './suspend.js';
import { TerminalGuard } from './terminal.js';

/** The shortest time between two terminal updates (a burst of keys or data is one update). */
const FRAME_MS = 33;

/** Exit status for a signal, as a shell reports a process killed by it. */
const SIGNAL_EXIT: Record<string, number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/** how one round of the view ended: quit, or the terminal handed to a run (then the same view again) */
export type RoundEnd<R> = { kind: 'quit' } | { kind: 'terminal'; session: SessionController; resume?: R };

export interface Round<R> {
  /** a line to show first (why the hand-over could not happen, or that it ended) */
  notice?: string;
  /** what the view was showing when it handed the terminal over */
  resume?: R;
  end: (how: RoundEnd<R>) => void;
  /** Ctrl+Z: give the terminal back and stop, as `less` does; `fg` redraws the view */
  suspend: () => void;
}

export async function runScreen<R>(o: {
  view: (round: Round<R>) => ReactElement;
  onQuit: () => Promise<void>;
  onSignal: () => Promise<void>;
  onFatal: () => Promise<void>;
}): Promise<never> {
  // Ink's frame assembly redoes every line each frame; this one reuses what did not change
  await installFastOutput();
  // Ink keeps every text it ever measured; a dashboard left open for hours must not
  await installBoundedTextCaches();
  const terminal = new TerminalGuard();
  let ink: { unmount(): void } | null = null;
  let screen: FrameStdout | null = null;
  const suspender = new Suspender(terminal, () => screen);
  const giveBack = () => {
    suspender.disarm();
    const current = ink;
    ink = null;
    current?.unmount();
    // no frame may follow once the main screen is back (a coalesced one waits on a timer)
    screen?.dispose();
    screen = null;
    terminal.restore();
  };
  const exitAfter = (work: () => Promise<void>, code: number) => {
    const exit = () => process.exit(code);
    work().then(exit, exit);
  };
  let ending = false;
  const fatal = (e: unknown) => {
    if (ending) process.exit(1);
    ending = true;
    giveBack();
    process.stderr.write(`nsa-dbg: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    exitAfter(o.onFatal, 1);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    const code = SIGNAL_EXIT[signal] ?? 1;
    if (ending) process.exit(code);
    ending = true;
    // after a hang-up the terminal is gone and writes fail; that must not become a second error
    process.stdout.on('error', () => {});
    giveBack();
    exitAfter(o.onSignal, code);
  };
  process.on('uncaughtException', fatal);
  for (const signal of Object.keys(SIGNAL_EXIT) as NodeJS.Signals[]) process.on(signal, onSignal);
  // the signal or error handler owns the exit; nothing may take the terminal again (raw mode, a frame)
  const stopped = () => new Promise<never>(() => {});

  let round: Omit<Round<R>, 'end' | 'suspend'> = {};
  try {
    for (;;) {
      let end: RoundEnd<R> = { kind: 'quit' };
      let finish: () => void = () => {};
      const done = new Promise<void>((r) => {
        finish = r;
      });
      terminal.enter();
      screen = new FrameStdout(process.stdout, FRAME_MS);
      const instance = render(
        o.view({
          ...round,
          end: (how) => {
            end = how;
            finish();
          },
          suspend: () => suspender.suspend(),
        }),
        {
          // debug: Ink writes each whole frame to `screen` unthrottled; the frame writer sends the
          // terminal only the cells that changed, at most one update per FRAME_MS
          stdout: screen as unknown as NodeJS.WriteStream,
          debug: true,
          exitOnCtrlC: false,
          patchConsole: false,
        },
      );
      ink = instance;
      suspender.arm();
      // a render error ends Ink with a rejected exit promise; done never resolves then
      await Promise.race([done, instance.waitUntilExit()]);
      // the hand-over or the quit: a stop now is the shell's default one
      suspender.disarm();
      instance.unmount();
      await instance.waitUntilExit();
      screen?.dispose();
      screen = null;
      ink = null;
      if (ending) return stopped();
      const how = end as RoundEnd<R>;
      if (how.kind === 'quit') break;
      // said at once: over a slow link the terminal takes a while, and the screen Ink left is blank
      process.stdout.write("\x1b[2J\x1b[Hnsa-dbg: opening the run's terminal…\r\n");
      const term = await how.session.openTerminal(process.stdout.columns || 80, process.stdout.rows || 24);
      if (ending) return stopped();
      if (typeof term === 'string') {
        round = { notice: term, resume: how.resume };
        continue;
      }
      await handOver(term.pty);
      term.release();
      round = { notice: 'back from the run’s terminal', resume: how.resume };
    }
  } catch (e) {
    fatal(e);
    return stopped();
  }
  ending = true;
  giveBack();
  exitAfter(o.onQuit, 0);
  return stopped();
}
