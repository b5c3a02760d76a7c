/**
 * How long a hang of many ranks takes from being confirmed to the verdict that names its culprit,
 * with a stack from every rank: the bundled demo at N ranks (`nsa-dbg demo --headless --ranks N
 * --lane demo-rank-stall`: the last rank stalls in its backward, the others wait in a simulated
 * native collective). Measured with nsa-dbg's stack hook (every silent rank asked at once) and
 * without it (`stackSignal: off`: the trainer's SIGUSR1 handler, one rank at a time, as before),
 * in the same run. The confirmation time is the engine log's; the verdict's, when the JSON is out.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export interface ScaleResult {
  ranks: number;
  confirmToVerdictS: number | null;
  /** ranks whose stack is in the verdict's evidence */
  ranksWithStack: number;
  culprit: number | null;
}

async function demo(ranks: number, hook: boolean): Promise<ScaleResult> {
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
        '--lane',
        'bench-rank-stall',
        '--runs-dir',
        join(dir, 'runs'),
      ],
      { cwd: dir, env, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const endMs = await new Promise<number>((resolve) => child.on('close', () => resolve(Date.now())));
    const confirmed = /^(\S+) run \S+: hang confirmed/m.exec(readFileSync(log, 'utf8'))?.[1];
    const r = JSON.parse(out.trim().split('\n').pop() ?? '{}') as {
      dumps?: Array<{ rank?: number }>;
      stall?: { rootCause?: { rank: number } };
    };
    return {
      ranks,
      confirmToVerdictS:
        confirmed === undefined ? null : Math.round((endMs - Date.parse(confirmed)) / 100) / 10,
      ranksWithStack: new Set((r.dumps ?? []).map((d) => d.rank).filter((x) => x !== undefined)).size,
      culprit: r.stall?.rootCause?.rank ?? null,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function measureScale(
  sizes: number[],
): Promise<Record<string, { hook: ScaleResult; oneAtATime: ScaleResult }>> {
  const out: Record<string, { hook: ScaleResult; oneAtATime: ScaleResult }> = {};
  for (const n of sizes) out[`ranks${n}`] = { hook: await demo(n, true), oneAtATime: await demo(n, false) };
  return out;
}
