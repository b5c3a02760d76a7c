/**
 * Last words under Slurm: a job run by `nsa-dbg run --slurm` on the real one-box cluster
 * (test/helpers/slurm-cluster.ts; two srun tasks are two "nodes", two torchrun agents with 2 ranks
 * each, the gloo DDP trainer of the Slurm tests) is `scancel`led while it trains. Slurm sends the
 * step's processes SIGTERM (then SIGKILL after KillWait): each rank's stack at that moment is in the
 * evidence, live and through `analyze`, and the verdict says where the ranks were when the job was
 * cancelled.
 *
 * Needs root, slurm-wlm, munge and /usr/bin/python3 with torch (.ci/run installs them).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { DDP_TRAINER, ddpLane } from '../helpers/ddp-lane.js';
import { freePort } from '../helpers/ports.js';
import { ranksSaid } from '../helpers/ranks-said.js';
import { type SlurmCluster, startSlurmCluster } from '../helpers/slurm-cluster.js';
import { waitUntil } from '../helpers/wait.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-slurm-lw-'));
let cluster: SlurmCluster;

beforeAll(async () => {
  cluster = await startSlurmCluster();
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

const LANE = ddpLane({
  name: 't-ddp2',
  description: '2 ranks per node under torchrun',
  nproc: 2,
  sigintWaitS: 8,
});

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, read field by field
type Json = Record<string, any>;

/** the newest step every rank's heartbeats reached in the one run under `runs` (0: none yet) */
function stepsOf(runs: string): { dir: string | null; step: number } {
  const id = existsSync(runs) ? readdirSync(runs)[0] : undefined;
  if (id === undefined) return { dir: null, step: 0 };
  const dir = join(runs, id);
  let step = Number.POSITIVE_INFINITY;
  for (const r of [0, 1, 2, 3]) {
    const f = join(dir, `heartbeat_rank${r}.jsonl`);
    const last = existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n').pop() : undefined;
    step = Math.min(step, last ? (JSON.parse(last).step as number) : 0);
  }
  return { dir, step };
}

describe('last words under Slurm', () => {
  it('scancel of a training job: every rank’s stack at the SIGTERM, and the verdict says where they were when the job was cancelled', async () => {
    const cwd = join(work, 'scancel');
    mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
    writeFileSync(join(cwd, '.nsa-dbg', 'presets', 't-ddp2.yaml'), LANE);
    const env = { ...cluster.env, NSA_DBG_HOME: join(cwd, 'home') };
    const runs = join(cwd, 'runs');
    const args = ['run', '--headless', '--json', '--lane', 't-ddp2', '--runs-dir', runs];
    args.push('--slurm', '--nodes', '1', '--sbatch-arg=--ntasks-per-node=2');
    args.push('--rdzv-port', String(await freePort()));
    const running = runCli([...args, '--', 'python3', '-u', DDP_TRAINER, 'ok', '100000'], {
      cwd,
      env,
      timeoutMs: 280_000,
    });
    // training: every rank past step 5
    const dir = await waitUntil(
      () => {
        const s = stepsOf(runs);
        return s.step >= 5 ? s.dir : null;
      },
      { timeoutMs: 150_000, what: 'every rank past step 5' },
    ).catch((e) => {
      const d = stepsOf(runs).dir;
      const out = d && existsSync(join(d, 'stdout.log')) ? readFileSync(join(d, 'stdout.log'), 'utf8') : '';
      throw new Error(
        `${String(e)}; run dir ${d}: ${d ? readdirSync(d).join(' ') : ''}\n${out.slice(-3000)}`,
      );
    });
    const jobId = readFileSync(join(dir, 'job_id'), 'utf8').trim();
    const cancel = await cluster.run('scancel', [jobId]);
    expect(cancel.code).toBe(0);
    const run = await running;
    expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
    const live = JSON.parse(run.stdout.trim().split('\n').pop()!);
    const an = await runCli(['analyze', live.runDir, '--json'], { cwd, env });
    const offline = JSON.parse(an.stdout);
    for (const r of [live, offline] as Json[]) {
      // killed from outside while it trained: no failure of its own, no hang
      expect(r.verdict).toBe('incomplete');
      expect(r.lastWords.map((w: Json) => w.rank)).toEqual([0, 1, 2, 3]);
      for (const w of r.lastWords) {
        expect(w.signal).toBe('SIGTERM');
        expect(w.at).toBeGreaterThan(1.7e9);
        // in the trainer's step or in DDP's all_reduce: never in the hook itself
        expect(w.mainThreadTop.file).not.toMatch(/sitecustomize\.py$/);
      }
      // slurmstepd's `*** STEP 1.0 ON vm CANCELLED AT … ***` in the job's output names the sender
      expect(ranksSaid(r.summary, 'when Slurm cancelled the job (SIGTERM)')).toEqual([0, 1, 2, 3]);
      // nsa-dbg saw the cancel as the run's teardown (srun's or slurmstepd's line) and looked at
      // every rank then (Slurm signals them all at once: most are gone by the time it looks)
      expect(r.teardown.trigger).toMatch(/^(srun began ending the job step|Slurm cancelled the job)$/);
      expect(r.teardown.ranks.map((t: Json) => t.rank)).toEqual([0, 1, 2, 3]);
    }
  }, 320_000);
});
