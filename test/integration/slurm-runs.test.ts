/**
 * `nsa-dbg run --slurm` against a real one-box Slurm cluster (slurm-wlm + munge, started by the
 * test: test/helpers/slurm-cluster.ts). Two srun tasks on the one node are two "nodes": two
 * torchrun agents meeting at a c10d rendezvous, 2 ranks each, the gloo DDP trainer of the
 * many-ranks tests (test/fixtures/trainers/ddp_ranks.py). The batch script, the job state, the
 * per-node placement of ranks, signals through `srun --overlap`, the verdicts (live and analyze),
 * a job that stays PENDING, `K`'s scancel and `attach` after the TUI was killed, all for real.
 *
 * Needs root, slurm-wlm, munge and /usr/bin/python3 with torch (.ci/run installs them).
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localOpener } from '../../src/cli/open-session.js';
import { parseNodeLine } from '../../src/ingest/node-map.js';
import { laneDirs, loadLanes } from '../../src/lanes/load.js';
import { BIN, runCli } from '../helpers/cli.js';
import { DDP_TRAINER, ddpLane } from '../helpers/ddp-lane.js';
import { freePort } from '../helpers/ports.js';
import { type SlurmCluster, startSlurmCluster } from '../helpers/slurm-cluster.js';
import { startSshd } from '../helpers/sshd.js';
import { waitUntil } from '../helpers/wait.js';

const TRAINER = DDP_TRAINER;
const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-slurm-'));
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

function folder(name: string) {
  const cwd = join(work, name);
  mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(join(cwd, '.nsa-dbg', 'presets', 't-ddp2.yaml'), LANE);
  const env = { ...cluster.env, NSA_DBG_HOME: join(cwd, 'home') };
  return { cwd, env, runs: join(cwd, 'runs') };
}

/** two agents on the one node: the script's one task per node is overridden on the command line */
const twoNodes = async () => [
  '--slurm',
  '--nodes',
  '1',
  '--sbatch-arg=--ntasks-per-node=2',
  '--rdzv-port',
  String(await freePort()),
];

/**
 * `run --headless --json` of the trainer in `mode`, then `analyze` of its run dir. `viaHost`: the
 * extra args reach a login node, and this side gets no SLURM_CONF (nothing Slurm may run here).
 */
async function headless(
  mode: string,
  o: { extra?: string[]; name?: string; viaHost?: boolean } = {},
): Promise<{ code: number | null; live: Json; offline: Json }> {
  const { cwd, env, runs } = folder(o.name ?? mode);
  const runEnv = o.viaHost ? { NSA_DBG_HOME: env.NSA_DBG_HOME } : env;
  const args = ['run', '--headless', '--json', '--lane', 't-ddp2', '--runs-dir', runs];
  args.push(...(o.extra ?? []), ...(await twoNodes()));
  const run = await runCli([...args, '--', 'python3', '-u', TRAINER, mode], {
    cwd,
    env: runEnv,
    timeoutMs: 170_000,
  });
  expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
  const live = JSON.parse(run.stdout.trim().split('\n').pop()!);
  const an = await runCli(['analyze', o.viaHost ? live.localDir : live.runDir, '--json'], {
    cwd,
    env: runEnv,
  });
  return { code: run.code, live, offline: JSON.parse(an.stdout) };
}

const nodeRecords = (runDir: string) =>
  readFileSync(join(runDir, 'nodes.jsonl'), 'utf8').split('\n').filter(Boolean).map(parseNodeLine);

describe('Slurm runs: 2 nodes × 2 ranks (two srun tasks on a one-box cluster)', () => {
  it('passes: the job script is in the run dir, every rank is placed on its node, analyze agrees', async () => {
    const { code, live, offline } = await headless('ok');
    expect(code).toBe(0);
    expect(live.verdict).toBe('pass');
    expect(live.ranks).toEqual([0, 1, 2, 3]);
    const runDir = live.runDir as string;
    const script = readFileSync(join(runDir, 'job.sbatch'), 'utf8');
    expect(script).toContain('srun --label');
    expect(readFileSync(join(runDir, 'node.sh'), 'utf8')).toContain('--rdzv_id "$SLURM_JOB_ID"');
    expect(readFileSync(join(runDir, 'job_id'), 'utf8')).toMatch(/^\d+\n$/);
    const recs = nodeRecords(runDir);
    expect(
      recs
        .filter((r) => r !== null && !('rank' in r))
        .map((r) => r!.task)
        .sort(),
    ).toEqual([0, 1]);
    const workers = recs.filter((r): r is Extract<typeof r, { rank: number }> => r !== null && 'rank' in r);
    expect(workers.map((w) => w.rank).sort()).toEqual([0, 1, 2, 3]);
    // two ranks per agent, local ranks 0 and 1 on each
    for (const task of [0, 1])
      expect(
        workers
          .filter((w) => w.task === task)
          .map((w) => w.localRank)
          .sort(),
      ).toEqual([0, 1]);
    expect(offline.verdict).toBe('pass');
    expect(offline.stepsReached).toBe(live.stepsReached);
  }, 200_000);

  it('a rank on the second node stalls: the verdict names node, rank and frame; signals went through srun', async () => {
    const { code, live, offline } = await headless('stall');
    expect(code).toBe(1);
    expect(live.verdict).toBe('hang');
    expect(live.stall).toMatchObject({ rank: 3, node: cluster.nodeName });
    expect(live.stall.rootCause).toMatchObject({ rank: 3 });
    expect(live.stall.frame).toMatchObject({ function: 'backward' });
    // the stalled rank answered its SIGUSR1 (delivered on its node by srun --overlap)
    const written = live.dumpRequests.filter((r: Json) => r.outcome === 'written').map((r: Json) => r.rank);
    expect(written).toContain(3);
    expect(offline.verdict).toBe('hang');
    expect(offline.stall).toEqual(live.stall);
  }, 200_000);

  it('a rank that crashes first is named with its node, not torchrun’s first observed failure', async () => {
    const { code, live, offline } = await headless('crash');
    expect(code).toBe(1);
    expect(live.verdict).toBe('crash');
    expect(live.crash).toMatchObject({ rank: 3, exception: 'ValueError', node: cluster.nodeName });
    expect(offline.crash).toEqual(live.crash);
  }, 200_000);

  it('a job that stays PENDING: the header says so with Slurm’s reason; K cancels it', async () => {
    const { cwd, runs } = folder('pending');
    const prev = process.env.SLURM_CONF;
    process.env.SLURM_CONF = cluster.env.SLURM_CONF;
    const rdzvPort = await freePort();
    const session = localOpener({
      kind: 'slurm',
      nodes: 1,
      sbatchArgs: [...cluster.pendingArgs],
      rdzvPort,
    }).open({
      lane: 't-ddp2',
      demo: false,
      command: ['python3', '-u', TRAINER, 'ok'],
      runsRoot: runs,
      cwd,
      lanes: loadLanes(laneDirs(cwd)),
      publishMs: 50,
    });
    try {
      await session.start();
      // the header's words on the launch: `job 41 PENDING (PartitionDown)`
      const pending = await waitUntil(
        () => {
          const m = /^job (\d+) PENDING \((\w+)\)/.exec(session.getState().launchLine ?? '');
          return m ? { id: m[1]!, reason: m[2]! } : null;
        },
        { timeoutMs: 30_000, what: 'the job PENDING with a reason' },
      );
      expect(pending.reason).toMatch(/Partition/);
      expect(session.getState().runState).toBe('starting');
      expect(session.quitConsequence()).toMatch(/keeps running \(K cancels it\)/);
      expect(session.cancelJobText()).toMatch(new RegExp(`scancel job ${pending.id}`));
      const listed = await runCli(['attach', '--runs-dir', runs, '--json'], { cwd, env: cluster.env });
      expect(JSON.parse(listed.stdout)[0]).toMatchObject({
        status: 'pending',
        job: { id: pending.id, state: 'PENDING', reason: 'PartitionDown' },
      });
      expect(await session.cancelJob()).toMatch(/being cancelled/);
      await waitUntil(() => /^job \d+ CANCELLED/.test(session.getState().launchLine ?? ''), {
        timeoutMs: 30_000,
        what: 'the job CANCELLED',
      });
      await waitUntil(() => session.getState().runState === 'exited', {
        timeoutMs: 20_000,
        what: 'the run over',
      });
    } finally {
      await session.dispose();
      if (prev === undefined) delete process.env.SLURM_CONF;
      else process.env.SLURM_CONF = prev;
    }
  }, 120_000);

  it('attach picks a running job up again after the TUI was killed', async () => {
    const { cwd, env, runs } = folder('attach');
    const ttyEnv = { ...process.env, ...env, TERM: 'xterm-256color' } as Record<string, string>;
    delete ttyEnv.CI;
    const tui = pty.spawn(
      process.execPath,
      [
        BIN,
        'run',
        '--lane',
        't-ddp2',
        '--runs-dir',
        runs,
        ...(await twoNodes()),
        '--',
        'python3',
        '-u',
        TRAINER,
        'ok',
        '40',
      ],
      { cwd, env: ttyEnv, cols: 140, rows: 40 },
    );
    let screen = '';
    tui.onData((d) => {
      screen = (screen + d).slice(-20_000);
    });
    try {
      await waitUntil(() => /job \d+ RUNNING/.test(screen), {
        timeoutMs: 60_000,
        what: 'the header: job RUNNING',
      });
    } finally {
      process.kill(tui.pid, 'SIGKILL');
    }
    const list = await runCli(['attach', '--runs-dir', runs, '--json'], { cwd, env });
    const [run] = JSON.parse(list.stdout) as Json[];
    // no pid of its own: the listing asks the job
    expect(run).toMatchObject({ status: 'running', job: { state: 'RUNNING' } });
    const out = await runCli(['attach', run!.runId, '--runs-dir', runs, '--headless', '--json'], {
      cwd,
      env,
      timeoutMs: 150_000,
    });
    const r = JSON.parse(out.stdout.trim().split('\n').pop()!);
    expect(r.verdict).toBe('pass');
    expect(r.stepsReached).toBe(40);
  }, 200_000);

  it('from a login node over SSH (--host): the job is submitted and followed there, its evidence mirrored byte for byte', async () => {
    const sshd = await startSshd({ env: cluster.env });
    try {
      sshd.trustHostKey();
      const host = ['--host', 'target', '--ssh-config', sshd.configPath];
      const { live: r, offline } = await headless('ok', { extra: host, name: 'login', viaHost: true });
      expect(r.verdict).toBe('pass');
      expect(r.ranks).toEqual([0, 1, 2, 3]);
      // the local mirror alone gives the same verdict
      expect(offline.verdict).toBe('pass');
      for (const f of ['job.sbatch', 'node.sh', 'job_id', 'nodes.jsonl', 'stdout.log'])
        expect(readFileSync(join(r.localDir, f), 'utf8'), f).toBe(readFileSync(join(r.runDir, f), 'utf8'));
    } finally {
      await sshd.stop();
    }
  }, 200_000);
});
