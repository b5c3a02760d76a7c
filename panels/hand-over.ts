/** The run's own terminal (`t`): the whole terminal goes to its PTY until Ctrl-] or the PTY ends. */
import type { PtyHandle } from '../src/targets/target.js';

/** Ctrl-] (telnet's escape): rarely used by programs, so it is safe to take back the terminal with. */
const ESCAPE = '\x1d';

/**
 * Give the whole terminal to the run's PTY until Ctrl-] or the PTY ends. Ink is unmounted meanwhile,
 * so exactly one thing owns stdin at any time.
 */
export function handOver(pty: PtyHandle): Promise<void> {
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
