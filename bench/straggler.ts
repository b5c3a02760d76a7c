/**
 * What straggler sampling costs a trainer: step time with and without it, in the same run. A real
 * torchrun of compute-bound ranks (test/fixtures/trainers/straggler.py with all its work arithmetic:
 * a fixed number of matmuls per step, so any time a sample takes shows in the step) under
 * `nsa-dbg run --headless`, with NSA_DBG_STRAGGLER_SAMPLING=alternate:S: sampling on and off in
 * turns of S seconds, at the fast rate (the costliest). Each step is "on" when a sample request
 * falls inside it (the requests' times are in the ranks' stack logs), "off" when none is within
 * a second of it; steps at the turns are left out. Cost: each window's median step against the
 * windows without beside it, the median of those ratios − 1. Target ≤ 1 %.
 * The box's other load moves both alike (they alternate every few seconds).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'nsa-dbg');
const TRAINER = join(ROOT, 'test', 'fixtures', 'trainers', 'straggler.py');

export interface StragglerCost {
  ranks: number;
  steps: number;
  stepsOn: number;
  stepsOff: number;
  medianOnS: number | null;
  medianOffS: number | null;
  /**
   * the median over windows of sampling of (its median step ÷ the mean of the medians of the
   * windows without on either side) − 1, percent
   */
  costPct: number | null;
  /** windows of sampling with a window without on either side */
  windows: number;
  /** samples taken of each rank, on average */
  samplesPerRank: number;
  /**
   * the trainer's side alone (bench/straggler_hook_cost.py: one process 30 frames down, no
   * nsa-dbg on the cores): mean iteration with samples by the sample signal, and by the stack
   * signal's faulthandler dump, against none, percent
   */
  hookAlone: { costPct: number | null; stackSignalCostPct: number | null } | null;
}

/** bench/straggler_hook_cost.py for `seconds`, its JSON line (null: it could not run) */
function hookAlone(seconds: number): Promise<StragglerCost['hookAlone']> {
  const script = join(ROOT, 'bench', 'straggler_hook_cost.py');
  return new Promise((resolve) =>
    execFile(
      '/usr/bin/python3',
      [script, String(seconds), '16', '1.5', '30'],
      { timeout: (seconds + 60) * 1000 },
      (e, out) => {
        try {
          const o = JSON.parse(out.trim().split('\n').pop() ?? '') as Record<string, unknown>;
          const n = (v: unknown) => (typeof v === 'number' ? v : null);
          resolve(e === null ? { costPct: n(o.costPct), stackSignalCostPct: n(o.stackSignalCostPct) } : null);
        } catch {
          resolve(null);
        }
      },
    ),
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

const median = (xs: number[]) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** [start, end] of every step of every rank, from its heartbeats */
function stepSpans(runDir: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const f of readdirSync(runDir).filter((n) => /^heartbeat_rank\d+\.jsonl$/.test(n))) {
    const starts = new Map<number, number>();
    for (const line of readFileSync(join(runDir, f), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const r = JSON.parse(line) as { ts: number; step: number; msg: string };
      if (r.msg === 'beat') starts.set(r.step, r.ts);
      else if (r.msg === 'progress' && starts.has(r.step)) out.push([starts.get(r.step)!, r.ts]);
    }
  }
  return out;
}

/** the times of every straggler sample request, from the ranks' stack logs */
function sampleTimes(runDir: string): number[] {
  const out: number[] = [];
  for (const f of readdirSync(runDir).filter((n) => n.startsWith('nsa-dbg-stacks_'))) {
    for (const m of readFileSync(join(runDir, f), 'utf8').matchAll(/^# request (\S+) \S+ sample$/gm))
      out.push(Number(m[1]));
  }
  return out.sort((a, b) => a - b);
}

export async function measureStragglerCost(
  opts: { ranks?: number; steps?: number; matmuls?: number; alternateS?: number; hookSeconds?: number } = {},
): Promise<StragglerCost> {
  const ranks = opts.ranks ?? 2;
  const steps = opts.steps ?? 120;
  const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-bench-straggler-'));
  try {
    mkdirSync(join(work, '.nsa-dbg', 'presets'), { recursive: true });
    writeFileSync(
      join(work, '.nsa-dbg', 'presets', 'bench.yaml'),
      'name: bench\ndescription: straggler sampling cost\nstepsFlag: ""\ndetector: { floorS: 10, maxStepS: 120 }\nstop: { halt: false, sigintWaitS: 5 }\n',
    );
    const args = [
      ...['run', '--headless', '--json', '--lane', 'bench', '--runs-dir', join(work, 'runs'), '--'],
      ...['/usr/bin/python3', '-m', 'torch.distributed.run', '--nproc_per_node', String(ranks)],
      ...[
        '--master_port',
        String(await freePort()),
        '--redirects',
        '2',
        '--tee',
        '2',
        TRAINER,
        '-1',
        String(steps),
      ],
    ];
    const env = {
      ...process.env,
      NSA_DBG_HOME: join(work, 'home'),
      NSA_DBG_STRAGGLER_SAMPLING: `alternate:${opts.alternateS ?? 5}`,
      STRAGGLER_COMPUTE_SHARE: '1',
      STRAGGLER_MATMULS: String(opts.matmuls ?? 8000),
    };
    const stdout = await new Promise<string>((resolve) =>
      execFile(
        process.execPath,
        [BIN, ...args],
        { cwd: work, env, maxBuffer: 64 << 20, timeout: 600_000 },
        (_e, out) => resolve(out),
      ),
    );
    const live = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { runDir?: string };
    if (live.runDir === undefined) throw new Error(`bench straggler: no result: ${stdout.slice(-300)}`);
    const spans = stepSpans(live.runDir);
    const samples = sampleTimes(live.runDir);
    const near = (a: number, b: number) => samples.some((t) => t >= a && t <= b);
    const on: number[] = [];
    const off: number[] = [];
    // the steps in time order, in runs of one kind (a window of sampling, a window without)
    const runs: Array<{ on: boolean; steps: number[] }> = [];
    for (const [a, b] of [...spans].sort((x, y) => x[0] - y[0])) {
      const kind = near(a, b) ? true : near(a - 1, b + 1) ? null : false;
      if (kind === null) continue; // at a turn
      (kind ? on : off).push(b - a);
      if (runs.at(-1)?.on !== kind) runs.push({ on: kind, steps: [] });
      runs.at(-1)!.steps.push(b - a);
    }
    const mOn = median(on);
    const mOff = median(off);
    // each window of sampling against the windows without on either side of it: the box's drift
    // over the run (its other load, clock speed, the trainer's own warm-up) cancels
    const ratios: number[] = [];
    for (let i = 1; i + 1 < runs.length; i++) {
      const [before, cur, after] = [runs[i - 1]!, runs[i]!, runs[i + 1]!];
      if (!cur.on || before.on || after.on) continue;
      ratios.push(median(cur.steps)! / ((median(before.steps)! + median(after.steps)!) / 2));
    }
    const ratio = median(ratios);
    return {
      ranks,
      steps,
      stepsOn: on.length,
      stepsOff: off.length,
      medianOnS: mOn,
      medianOffS: mOff,
      costPct: ratio === null ? null : Math.round((ratio - 1) * 10_000) / 100,
      windows: ratios.length,
      samplesPerRank: Math.round(samples.length / ranks),
      hookAlone: await hookAlone(opts.hookSeconds ?? 60),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
