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

/** a training job of `nsa-dbg run --slurm` (the DDP trainer, 4 ranks on 2 "nodes"), not awaited */
async function startJob(name: string, extra: string[] = []) {
  const cwd = join(work, name);
  mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(join(cwd, '.nsa-dbg', 'presets', 't-ddp2.yaml'), LANE);
  const env = { ...cluster.env, NSA_DBG_HOME: join(cwd, 'home') };
  const runs = join(cwd, 'runs');
  const args = ['run', '--headless', '--json', '--lane', 't-ddp2', '--runs-dir', runs];
  args.push('--slurm', '--nodes', '1', '--sbatch-arg=--ntasks-per-node=2', ...extra);
  args.push('--rdzv-port', String(await freePort()));
  const running = runCli([...args, '--', 'python3', '-u', DDP_TRAINER, 'ok', '100000'], {
    cwd,
    env,
    timeoutMs: 280_000,
  });
  return { cwd, env, runs, running };
}

/** the run's folder once every rank is past step `past` */
function training(runs: string, past = 5): Promise<string> {
  return waitUntil(
    () => {
      const s = stepsOf(runs);
      return s.step >= past ? s.dir : null;
    },
    { timeoutMs: 150_000, what: `every rank past step ${past}` },
  ).catch((e) => {
    const d = stepsOf(runs).dir;
    const out = d && existsSync(join(d, 'stdout.log')) ? readFileSync(join(d, 'stdout.log'), 'utf8') : '';
    throw new Error(`${String(e)}; run dir ${d}: ${d ? readdirSync(d).join(' ') : ''}\n${out.slice(-3000)}`);
  });
}

/**
 * Live and through `analyze`: every rank's SIGTERM record, the sender named in the sentence, and
 * nsa-dbg's teardown look at every rank
 */
async function expectLastWords(job: Awaited<ReturnType<typeof startJob>>, when: string): Promise<void> {
  const run = await job.running;
  expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
  const live = JSON.parse(run.stdout.trim().split('\n').pop()!);
  const an = await runCli(['analyze', live.runDir, '--json'], { cwd: job.cwd, env: job.env });
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
    expect(ranksSaid(r.summary, when), r.summary).toEqual([0, 1, 2, 3]);
    // nsa-dbg saw the end as the run's teardown (srun's or slurmstepd's line) and looked at every
    // rank then (Slurm signals them all at once: most are gone by the time it looks)
    expect(r.teardown.trigger).toMatch(
      /^(srun began ending the job step|Slurm cancelled the job|the job hit its time limit)$/,
    );
    expect(r.teardown.ranks.map((t: Json) => t.rank)).toEqual([0, 1, 2, 3]);
  }
}

describe('last words under Slurm', () => {
  it('scancel of a training job: every rank’s stack at the SIGTERM, and the verdict says where they were when the job was cancelled', async () => {
    const job = await startJob('scancel');
    const dir = await training(job.runs);
    const jobId = readFileSync(join(dir, 'job_id'), 'utf8').trim();
    const cancel = await cluster.run('scancel', [jobId]);
    expect(cancel.code).toBe(0);
    await expectLastWords(job, 'when Slurm cancelled the job (SIGTERM)');
  }, 320_000);

  it('a job that runs into its time limit (--time 1): every rank’s stack at Slurm’s SIGTERM, the limit named as the cause', async () => {
    const job = await startJob('time-limit', ['--time', '1']);
    // every rank trains (its hook installed) well before the minute is over
    await training(job.runs, 1);
    // nothing is done to the job: slurmctld ends it once its minute is over (it looks every 30 s)
    await expectLastWords(job, 'when the job hit its time limit (SIGTERM)');
  }, 320_000);
});
