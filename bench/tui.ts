/**
 * The real app (bin/nsa-dbg) in a real PTY at 120×40, as a user leaves it open: CPU of its node
 * process (utime+stime from /proc, one core = 100 %), bytes per second the terminal received, RSS
 * at the end, and the time from a keypress to the output that shows its effect (`?` opens the
 * help, `?` closes it again), measured under the same load after the CPU/bytes window.
 *
 * `via`: 'run' starts the dashboard as `nsa-dbg run --lane batched-prefill`; 'notebook' starts the
 * notebook TUI and opens the dashboard from a cell running the same lane and trainer
 * (bench/notebook-tui.ts); the warm-up, the window and the keys start once the dashboard is up.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { notebookArgs, openCellDashboard, quitNotebook, ScreenWatch } from './notebook-tui.js';

export interface TuiResult {
  cpuPct: number;
  bytesPerSec: number;
  rssMB: number;
  p95KeyLatencyMs?: number;
  keySamples?: number;
  seconds: number;
}

const ROOT = join(import.meta.dirname, '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function cpuTicks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return Number(rest[11]) + Number(rest[12]);
}

function rssMB(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

const CLK_TCK = 100;
const HELP_TITLE = 'Esc or ? closes';
const LOG_TITLE = /^log · [\d,]+ lines/m;

const p95 = (v: number[]) =>
  [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.ceil(v.length * 0.95) - 1)]!;

/** run the app on `trainer` (argv), wait `warmupS`, measure for `seconds`, then `keys` toggles */
export async function measureTui(
  trainer: string[],
  seconds: number,
  keys: number,
  warmupS = 8,
  via: 'run' | 'notebook' = 'run',
): Promise<TuiResult> {
  const runs = mkdtempSync(join(tmpdir(), 'nsa-dbg-bench-tui-'));
  const env = { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TERM: 'xterm-256color' } as Record<
    string,
    string
  >;
  delete env.CI;
  delete env.CONTINUOUS_INTEGRATION;
  delete env.NSA_DBG_LOG;
  // the program itself, as the installed `nsa-dbg` starts (with the node flags its first lines give)
  const args =
    via === 'run'
      ? ['run', '--lane', 'batched-prefill', '--runs-dir', runs, '--', ...trainer]
      : notebookArgs(join(runs, 'bench-notebook.json'), trainer);
  const p = pty.spawn(join(ROOT, 'bin', 'nsa-dbg'), args, {
    name: 'xterm-256color',
    cols: 120,
    rows: 40,
    cwd: ROOT,
    env,
  });
  let bytes = 0;
  let onChunk: (() => void) | null = null;
  // what the screen shows: the frame writer sends only changed cells, so the words of a line that
  // comes back (the panel under the help) seldom arrive together in the output
  const watch = new ScreenWatch(120, 40);
  p.onData((d) => {
    bytes += Buffer.byteLength(d);
    watch.feed(d);
    onChunk?.();
  });
  try {
    if (via === 'notebook') await openCellDashboard(p, watch);
    await sleep(warmupS * 1000);
    const t0 = cpuTicks(p.pid);
    const b0 = bytes;
    const w0 = performance.now();
    await sleep(seconds * 1000);
    const wall = (performance.now() - w0) / 1000;
    const result: TuiResult = {
      cpuPct: (100 * (cpuTicks(p.pid) - t0)) / CLK_TCK / wall,
      bytesPerSec: (bytes - b0) / wall,
      rssMB: rssMB(p.pid),
      seconds: wall,
    };
    if (keys > 0) {
      const lat: number[] = [];
      for (let i = 0; i < keys; i++) {
        // open the help (its title), close it (its title gone, the log pane's title back)
        const open = i % 2 === 0;
        const done = (s: string) =>
          open ? s.includes(HELP_TITLE) : !s.includes(HELP_TITLE) && LOG_TITLE.test(s);
        const t = performance.now();
        const shown = new Promise<number>((resolve) => {
          onChunk = () => {
            if (done(watch.screen.text())) resolve(performance.now() - t);
          };
        });
        p.write('?');
        const ms = await Promise.race([shown, sleep(2000).then(() => Number.NaN)]);
        onChunk = null;
        if (Number.isFinite(ms)) lat.push(ms);
        await sleep(400 + ((i * 137) % 300));
      }
      result.keySamples = lat.length;
      result.p95KeyLatencyMs = lat.length > 0 ? p95(lat) : Number.NaN;
    }
    return result;
  } finally {
    if (via === 'notebook') await quitNotebook(p);
    else {
      p.write('q');
      await sleep(300);
      p.write('y');
    }
    p.kill('SIGTERM');
    await sleep(1500);
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone already
    }
    rmSync(runs, { recursive: true, force: true });
  }
}
