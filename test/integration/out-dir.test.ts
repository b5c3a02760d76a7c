/**
 * A trainer that keeps its evidence where its own config says (nsa-vibe's `train.out_dir`), run
 * twice into the same out_dir as people do: nsa-dbg finds the out_dir from the config the run's env
 * names, copies what this run writes into the run dir's out/, and judges each run by its own steps,
 * live and in `analyze` alike; its output shows only step 1 (log_every 20).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const TRAINER = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'config_out_dir.py');
const work = mkdtempSync(join(tmpdir(), 'nsa-outdir-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

mkdirSync(join(work, 'configs'));
writeFileSync(join(work, 'configs', 'smoke.yaml'), 'train:\n  log_every: 20\n  out_dir: "artifacts/smoke"\n');
mkdirSync(join(work, '.nsa-dbg', 'presets'), { recursive: true });
writeFileSync(
  join(work, '.nsa-dbg', 'presets', 't-cfg.yaml'),
  'name: t-cfg\nenv: { CONFIG: configs/smoke.yaml }\nstop: { halt: false }\n',
);

async function run(steps: number) {
  const env = { NSA_DBG_HOME: join(work, 'home') };
  const r = await runCli(
    [
      'run',
      '--headless',
      '--json',
      '--lane',
      't-cfg',
      '--steps',
      String(steps),
      '--runs-dir',
      join(work, 'runs'),
      '--',
      'python3',
      '-u',
      TRAINER,
    ],
    { cwd: work, env, timeoutMs: 60_000 },
  );
  expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  const live = JSON.parse(r.stdout.trim().split('\n').pop()!);
  const a = await runCli(['analyze', live.localDir, '--json'], { cwd: work, env });
  return { code: r.code, live, offline: JSON.parse(a.stdout) };
}

describe("the trainer's own out_dir", () => {
  it('found from the config, copied as this run writes it, each run judged by its own steps', async () => {
    const first = await run(6);
    expect(first.code).toBe(0);
    expect(first.live).toMatchObject({ verdict: 'pass', stepsReached: 6, go: true });
    const spec = JSON.parse(readFileSync(join(first.live.localDir, 'command.json'), 'utf8'));
    expect(spec.outDir).toBe(join(work, 'artifacts', 'smoke'));
    expect(spec.outDirFrom).toEqual({ from: 'config', config: 'train.out_dir of configs/smoke.yaml' });
    // the output said step 1; the heartbeats in the out_dir say 6
    expect(readFileSync(join(first.live.localDir, 'stdout.log'), 'utf8')).not.toMatch(/^step 0006/m);
    expect(first.live.digest.platform.torch).toBe('0.0.0+test');
    // the second run appends to the same heartbeat file and CSV: only its own 3 steps count
    const second = await run(3);
    expect(second.live).toMatchObject({ verdict: 'pass', stepsReached: 3, go: true });
    const copied = readFileSync(join(second.live.localDir, 'out', 'heartbeat_rank0.jsonl'), 'utf8');
    expect(copied.trim().split('\n')).toHaveLength(1 + 3 * 3);
    expect(
      readFileSync(join(second.live.localDir, 'out', 'training.csv'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(3);
    for (const r of [first, second])
      for (const k of ['verdict', 'stepsReached', 'throughput', 'digest'])
        expect(r.offline[k], k).toEqual(r.live[k]);
  });
});
