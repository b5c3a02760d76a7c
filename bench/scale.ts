/**
 * How long a hang of many ranks takes from being confirmed to the verdict that names its culprit,
 * with a stack from every rank: the bundled demo at N ranks (`nsa-dbg demo --headless --ranks N
 * --lane demo-rank-stall`: the last rank stalls in its backward, the others wait in a simulated
 * native collective). Measured with nsa-dbg's stack hook (every silent rank asked at once) and
 * without it (`stackSignal: off`: the trainer's SIGUSR1 handler, one rank at a time, as before),
 * in the same run. Past 16 ranks the ranks are spread over simulated nodes of 8 (`--nodes`), each
 * asked as a cluster's node is. The confirmation and the verdict's times are the engine log's (the
 * verdict: every rank's stack in and the culprit judged); the exit's, when the JSON is out.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
/** ranks per simulated node past 16 ranks (`--nodes`): 8 GPUs a node */
const RANKS_PER_NODE = 8;

export interface ScaleResult {
  ranks: number;
  /** simulated nodes the ranks were spread over (1: one box) */
  nodes: number;
  /**
   * from the hang confirmed to the verdict known with every rank's stack (the engine's "culprit
   * judged": the stop for the evidence starts there); null when it never came
   */
  confirmToVerdictS: number | null;
  /** from the hang confirmed to nsa-dbg's exit with the JSON (the trainer's teardown included) */
  confirmToExitS: number | null;
  /** ranks whose stack is in the verdict's evidence */
  ranksWithStack: number;
  culprit: number | null;
  /** nsa-dbg's largest resident set during the run, MB */
  peakRssMB: number | null;
}

function rssMB(pid: number | undefined): number | null {
  try {
    const kb = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) / 1024;
  } catch {
    return null;
  }
}

const secondsBetween = (from: string | undefined, to: string | number | undefined) =>
  from === undefined || to === undefined
    ? null
    : Math.round(((typeof to === 'number' ? to : Date.parse(to)) - Date.parse(from)) / 100) / 10;

async function demo(ranks: number, hook: boolean): Promise<ScaleResult> {
  const nodes = ranks > 16 ? Math.ceil(ranks / RANKS_PER_NODE) : 1;
  const dir = mkdtempSync(join(tmpdir(), 'nsa-dbg-bench-scale-'));
  try {
    mkdirSync(join(dir, '.nsa-dbg', 'presets'), { recursive: true });
    const lane = readFileSync(join(ROOT, 'presets', 'demo-rank-stall.yaml'), 'utf8').replace(
      /^name: .*$/m,
      'name: bench-rank-stall',
    );
    writeFileSync(
      join(dir, '.nsa-dbg', 'presets', 'bench.yaml'),
      `${lane}\n${hook ? '' : 'stackSignal: off\n'}`,
    );
    const log = join(dir, 'engine.log');
    const env: NodeJS.ProcessEnv = { ...process.env, NSA_DBG_HOME: join(dir, 'home'), NSA_DBG_LOG: log };
    delete env.CI;
    const child = spawn(
      join(ROOT, 'bin', 'nsa-dbg'),
      [
        'demo',
        '--headless',
        '--json',
        '--ranks',
        String(ranks),
        ...(nodes > 1 ? ['--nodes', String(nodes)] : []),
        '--lane',
        'bench-rank-stall',
        '--runs-dir',
        join(dir, 'runs'),
      ],
      { cwd: dir, env, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    let peak: number | null = null;
    const sampler = setInterval(() => {
      const mb = rssMB(child.pid);
      if (mb !== null) peak = Math.max(peak ?? 0, mb);
    }, 500);
    const endMs = await new Promise<number>((resolve) => child.on('close', () => resolve(Date.now())));
    clearInterval(sampler);
    const text = readFileSync(log, 'utf8');
    const confirmed = /^(\S+) run \S+: hang confirmed/m.exec(text)?.[1];
    const judged = /^(\S+) run \S+: culprit judged/m.exec(text)?.[1];
    const r = JSON.parse(out.trim().split('\n').pop() ?? '{}') as {
      dumps?: Array<{ rank?: number }>;
      stall?: { rootCause?: { rank: number } };
    };
    return {
      ranks,
      nodes,
      confirmToVerdictS: secondsBetween(confirmed, judged),
      confirmToExitS: secondsBetween(confirmed, endMs),
      ranksWithStack: new Set((r.dumps ?? []).map((d) => d.rank).filter((x) => x !== undefined)).size,
      culprit: r.stall?.rootCause?.rank ?? null,
      peakRssMB: peak === null ? null : Math.round(peak),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Each size with the stack hook; up to 64 ranks also through the trainer's own handler alone (one
 * rank at a time: past 64 that takes minutes and says nothing new).
 */
export async function measureScale(
  sizes: number[],
): Promise<Record<string, { hook: ScaleResult; oneAtATime: ScaleResult | null }>> {
  const out: Record<string, { hook: ScaleResult; oneAtATime: ScaleResult | null }> = {};
  for (const n of sizes)
    out[`ranks${n}`] = { hook: await demo(n, true), oneAtATime: n <= 64 ? await demo(n, false) : null };
  return out;
}
