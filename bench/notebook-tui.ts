/**
 * The dashboard as the notebook opens it: `nsa-dbg --notebook FILE -- TRAINER...` in the PTY, then
 * the keys a user types. `n` opens the lane picker, `batched` filters it to batched-prefill (the
 * lane the plain dashboard's bench runs), Enter starts the cell (the trainer after `--`), and Enter
 * on the running cell opens its dashboard. What is measured after that is the same app, the same
 * window and the same keys as the plain dashboard's figures (bench/tui.ts).
 */
import { ScreenText } from './screen-text.js';

export interface Keyboard {
  write(keys: string): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Follows the terminal's screen; `until` waits for a state of it (or fails after `ms`). */
export class ScreenWatch {
  readonly screen: ScreenText;
  constructor(columns: number, rows: number) {
    this.screen = new ScreenText(columns, rows);
  }
  feed(d: string): void {
    this.screen.write(d);
  }
  async until(ok: (text: string) => boolean, what: string, ms = 20_000): Promise<string> {
    const end = Date.now() + ms;
    for (;;) {
      const text = this.screen.text();
      if (ok(text)) return text;
      if (Date.now() > end) throw new Error(`bench: no ${what} on screen after ${ms / 1000} s:\n${text}`);
      await sleep(100);
    }
  }
}

/** the notebook's arguments: new cells run `trainer` */
export const notebookArgs = (notebook: string, trainer: string[]) => [
  '--notebook',
  notebook,
  '--',
  ...trainer,
];

/** from the empty notebook to the dashboard of its first cell, running batched-prefill */
export async function openCellDashboard(keys: Keyboard, watch: ScreenWatch): Promise<void> {
  await watch.until((s) => s.includes('no cells yet'), 'empty notebook', 30_000);
  keys.write('n');
  await watch.until((s) => s.includes('new cell from lane'), 'lane picker');
  keys.write('batched');
  await watch.until((s) => /filter: batched_/.test(s), 'filtered lane picker');
  keys.write('\r');
  await watch.until((s) => /c1\s+RUN\s+batched-prefill/.test(s), 'running cell c1');
  keys.write('\r');
  await watch.until(
    (s) => /lane batched-prefill · running/.test(s) && s.includes('q back'),
    "c1's dashboard",
  );
}

/** out of the cell's dashboard, then out of the notebook, stopping the cell */
export async function quitNotebook(keys: Keyboard): Promise<void> {
  keys.write('q');
  await sleep(500);
  keys.write('q');
  await sleep(300);
  keys.write('y');
}
