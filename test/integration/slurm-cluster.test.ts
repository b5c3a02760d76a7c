/**
 * The one-box Slurm cluster itself (test/helpers/slurm-cluster.ts): a 2-task srun step, a job held
 * PENDING with a reason, and an `srun --overlap` step reading /proc of a running job's process. Two
 * torchrun agents meeting at a c10d rendezvous as two nodes of one allocation is what every test in
 * slurm-runs.test.ts does through nsa-dbg (the node records show both agents and all four ranks).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SlurmCluster, startSlurmCluster } from '../helpers/slurm-cluster.js';
import { waitUntil } from '../helpers/wait.js';

let cluster: SlurmCluster;

async function sbatch(args: string[]): Promise<string> {
  const r = await cluster.run('/usr/bin/sbatch', ['--parsable', ...args]);
  expect(r.code, r.stderr).toBe(0);
  // --parsable prints `ID` or `ID;cluster`
  return r.stdout.trim().split(';')[0]!;
}

/** `scontrol show job ID` as key → value (values never contain spaces in the fields we read) */
async function showJob(id: string): Promise<Record<string, string>> {
  const r = await cluster.run('/usr/bin/scontrol', ['show', 'job', id]);
  return Object.fromEntries([...r.stdout.matchAll(/([\w/:]+)=(\S*)/g)].map((m) => [m[1]!, m[2]!]));
}

/** squeue's `%T %r` for the job, '' once it has finished (plain squeue -j hides finished jobs) */
async function queueState(id: string): Promise<string> {
  return (await cluster.run('/usr/bin/squeue', ['-h', '-j', id, '-o', '%T %r'])).stdout.trim();
}

/** wait until squeue no longer lists the job as live, then read its final state from scontrol */
async function finished(id: string, timeoutMs: number): Promise<Record<string, string>> {
  await waitUntil(async () => !/^(PENDING|CONFIGURING|RUNNING|COMPLETING)/.test(await queueState(id)), {
    timeoutMs,
    intervalMs: 250,
    what: `job ${id} to finish`,
  });
  return showJob(id);
}

beforeAll(async () => {
  cluster = await startSlurmCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
}, 30_000);

describe('one-box slurm cluster', () => {
  it('runs a 2-task srun step inside a batch job', async () => {
    const script = join(cluster.dir, 'hostname.sh');
    writeFileSync(script, '#!/bin/bash\n#SBATCH --ntasks=2\nsrun -n 2 hostname\n');
    const out = join(cluster.dir, 'hostname.out');
    const id = await sbatch(['-o', out, script]);
    const job = await finished(id, 20_000);
    expect(job.JobState).toBe('COMPLETED');
    expect(job.ExitCode).toBe('0:0');
    expect(readFileSync(out, 'utf8').trim().split('\n')).toEqual([cluster.nodeName, cluster.nodeName]);
  });

  it('holds a job PENDING with a reason until scancel', async () => {
    const id = await sbatch([...cluster.pendingArgs, '-o', '/dev/null', '--wrap', 'true']);
    await waitUntil(async () => (await queueState(id)) === 'PENDING PartitionDown', {
      timeoutMs: 10_000,
      intervalMs: 200,
      what: `job ${id} PENDING PartitionDown`,
    });
    expect((await cluster.run('/usr/bin/scancel', [id])).code).toBe(0);
    const job = await finished(id, 10_000);
    expect(job.JobState).toBe('CANCELLED');
    expect(job.Reason).toBe('PartitionDown');
  });

  it('srun --overlap reads /proc of a running job process', async () => {
    const pidFile = join(cluster.dir, 'sleep.pid');
    const id = await sbatch(['-o', '/dev/null', '--wrap', `echo $$ > ${pidFile}; exec sleep 60`]);
    const pid = await waitUntil(
      async () => {
        if (!(await queueState(id)).startsWith('RUNNING')) return '';
        try {
          return readFileSync(pidFile, 'utf8').trim();
        } catch {
          return '';
        }
      },
      { timeoutMs: 15_000, intervalMs: 200, what: `job ${id} running with its pid file` },
    );
    const line = (await cluster.run('/usr/bin/squeue', ['-h', '-j', id, '-o', '%i %T %r %N'])).stdout.trim();
    expect(line).toBe(`${id} RUNNING None ${cluster.nodeName}`);
    const r = await cluster.run('/usr/bin/srun', [
      '--overlap',
      `--jobid=${id}`,
      '-w',
      cluster.nodeName,
      'cat',
      `/proc/${pid}/status`,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Name:\tsleep$/m);
    expect(r.stdout).toMatch(/^State:\t/m);
    expect((await cluster.run('/usr/bin/scancel', [id])).code).toBe(0);
    expect((await finished(id, 15_000)).JobState).toBe('CANCELLED');
  });
});
