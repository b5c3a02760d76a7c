import { type Instance, render } from 'ink';
import type { TuiOptions } from '../src/cli/deps.js';
import type { SessionController } from '../src/session/state.js';
import type { PtyHandle } from '../src/targets/target.js';
import { App } from './App.js';
import { resolveAscii } from './ascii.js';
import { FrameStdout } from './frame-stdout.js';
import { installFastOutput } from './ink-fast-output.js';
import { TerminalGuard } from './terminal.js';

/** Ctrl-] (telnet's escape): rarely used by programs, so it is safe to take back the terminal with. */
const ESCAPE = '\x1d';

/**
 * Give the whole terminal to the run's PTY until Ctrl-] or the PTY ends. Ink is unmounted meanwhile,
 * so exactly one thing owns stdin at any time.
 */
function handOver(pty: PtyHandle): Promise<void> {
  const { stdin, stdout } = process;
  stdout.write('\x1b[2J\x1b[H');
  stdout.write("nsa-dbg: the run's terminal. Ctrl-] returns to the dashboard.\r\n");
  return new Promise((resolve) => {
    // Ink left stdin in utf8 mode, so chunks are strings (a Buffer if someone reset the encoding)
    const onInput = (d: Buffer | string) => {
      const text = typeof d === 'string' ? d : d.toString('utf8');
      const at = text.indexOf(ESCAPE);
      if (at < 0) return pty.write(text);
      if (at > 0) pty.write(text.slice(0, at));
      done();
    };
    const onResize = () => pty.resize(stdout.columns, stdout.rows);
    const out = pty.onData((s) => stdout.write(s));
    const ended = pty.onExit(() => done());
    let finished = false;
    function done() {
      if (finished) return;
      finished = true;
      stdin.off('data', onInput);
      stdout.off('resize', onResize);
      out.dispose();
      ended.dispose();
      if (stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
      // leave the alternate screen a full-screen program may have entered, then start clean
      stdout.write('\x1b[?1049l\x1b[2J\x1b[H');
      resolve();
    }
    if (stdin.isTTY) stdin.setRawMode(true);
    stdin.on('data', onInput);
    stdin.ref();
    stdin.resume();
    stdout.on('resize', onResize);
  });
}

/** The shortest time between two terminal updates (a burst of keys or data is one update). */
const FRAME_MS = 33;

/** Exit status for a signal, as a shell reports a process killed by it. */
const SIGNAL_EXIT: Record<string, number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/**
 * The UI's entry: render the App for an engine controller until the user quits. Ink's console
 * patching is off (nothing may print around the frame). Frames go through a FrameWriter, which sends
 * only the changed cells with absolute cursor positions (Ink 6.8's own incremental mode moves the
 * cursor relatively and left stale lines on screen in tmux; its full-frame mode sends a screenful
 * per update).
 *
 * The dashboard lives on the alternate screen, and every way out gives the terminal back the same
 * way: Ink is unmounted first (its final frame lands on the alternate screen, its cursor and raw
 * mode are restored), then the main screen comes back. That order matters: Ink also unmounts on
 * process exit, and a frame drawn after leaving the alternate screen would stay on the user's.
 * - `q`: the controller stops or leaves the run, then exit 0;
 * - SIGINT/SIGTERM/SIGHUP: the terminal first, then the same quit as `q` (a second signal exits at
 *   once), exit 128 + signal;
 * - an uncaught exception or a render error: the terminal first, then the error on the main screen,
 *   exit 1 (the local trainer gets SIGHUP when its PTY closes).
 */
export async function runTui(controller: SessionController, options: TuiOptions = {}): Promise<void> {
  const ascii = resolveAscii(options.ascii);
  // Ink's frame assembly redoes every line each frame; this one reuses what did not change
  await installFastOutput();
  const terminal = new TerminalGuard();
  let ink: Instance | null = null;
  let screen: FrameStdout | null = null;
  const giveBack = () => {
    const current = ink;
    ink = null;
    current?.unmount();
    // no frame may follow once the main screen is back (a coalesced one waits on a timer)
    screen?.dispose();
    screen = null;
    terminal.restore();
  };
  const fatal = (e: unknown) => {
    giveBack();
    process.stderr.write(`nsa-dbg: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  };
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    const code = SIGNAL_EXIT[signal] ?? 1;
    if (signalled) process.exit(code);
    signalled = true;
    // after a hang-up the terminal is gone and writes fail; that must not become a second error
    process.stdout.on('error', () => {});
    giveBack();
    const exit = () => process.exit(code);
    controller.quit().then(exit, exit);
  };
  process.on('uncaughtException', fatal);
  for (const signal of Object.keys(SIGNAL_EXIT) as NodeJS.Signals[]) process.on(signal, onSignal);

  let notice: string | undefined;
  try {
    for (;;) {
      let next: 'quit' | 'terminal' = 'quit';
      let finish: () => void = () => {};
      const done = new Promise<void>((r) => {
        finish = r;
      });
      terminal.enter();
      screen = new FrameStdout(process.stdout, FRAME_MS);
      const instance = render(
        <App
          controller={controller}
          ascii={ascii}
          initialNotice={notice}
          onExit={() => finish()}
          onTerminal={() => {
            next = 'terminal';
            finish();
          }}
        />,
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
      // a render error ends Ink with a rejected exit promise; done never resolves then
      await Promise.race([done, instance.waitUntilExit()]);
      instance.unmount();
      await instance.waitUntilExit();
      screen?.dispose();
      screen = null;
      ink = null;
      // the signal handler owns the exit; nothing may take the terminal again (raw mode, a frame)
      const stopped = () => new Promise<void>(() => {});
      if (signalled) return stopped();
      if (next === 'quit') break;
      const term = await controller.openTerminal(process.stdout.columns || 80, process.stdout.rows || 24);
      if (signalled) return stopped();
      if (typeof term === 'string') {
        notice = term;
        continue;
      }
      await handOver(term.pty);
      term.release();
      notice = 'back from the run’s terminal';
    }
  } catch (e) {
    fatal(e);
  }
  giveBack();
  process.exit(0);
}
export { runNotebookTui } from './notebook/run.js';
