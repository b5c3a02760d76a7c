import { render } from 'ink';
import type { SessionController } from '../src/session/state.js';
import type { PtyHandle } from '../src/targets/target.js';
import { App } from './App.js';

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

/**
 * The UI's entry: render the App for an engine controller until the user quits. Ink's console
 * patching is off (nothing may print around the frame); full-frame rendering, because Ink 6.8's
 * incremental mode left stale lines on screen in tmux.
 */
export async function runTui(controller: SessionController): Promise<void> {
  let notice: string | undefined;
  for (;;) {
    let next: 'quit' | 'terminal' = 'quit';
    let finish: () => void = () => {};
    const done = new Promise<void>((r) => {
      finish = r;
    });
    const ink = render(
      <App
        controller={controller}
        initialNotice={notice}
        onExit={() => finish()}
        onTerminal={() => {
          next = 'terminal';
          finish();
        }}
      />,
      { exitOnCtrlC: false, patchConsole: false, maxFps: 20 },
    );
    await done;
    ink.unmount();
    await ink.waitUntilExit().catch(() => undefined);
    if (next === 'quit') break;
    const term = await controller.openTerminal(process.stdout.columns || 80, process.stdout.rows || 24);
    if (typeof term === 'string') {
      notice = term;
      continue;
    }
    await handOver(term.pty);
    term.release();
    notice = 'back from the run’s terminal';
  }
  process.exit(0);
}
