/**
 * Real jobs on a real one-box Slurm cluster (test/helpers/slurm-cluster.ts): a 2-task srun step,
 * two torchrun agents meeting at a c10d rendezvous as two "nodes" of one allocation, a job held
 * PENDING with a reason, and an `srun --overlap` step reading /proc of a running job's process.
 */

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/ports.js';
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

  it('two torchrun agents meet at a c10d rendezvous as two nodes', async () => {
    const trainer = join(cluster.dir, 'trainer.py');
    writeFileSync(
      trainer,
      [
        'import os, sys',
        'import torch',
        'import torch.distributed as dist',
        'dist.init_process_group("gloo")',
        't = torch.ones(1)',
        'dist.all_reduce(t)',
        'keys = ["RANK", "LOCAL_RANK", "GROUP_RANK", "ROLE_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",',
        '        "GROUP_WORLD_SIZE", "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "SLURM_PROCID"]',
        // one write(2) per line: both workers of an agent share its stdout pipe, and print() under
        // PYTHONUNBUFFERED writes the text and its newline apart, so another rank's line could land
        // between them (seen in CI: "SUM=4WORKER RANK=3 …"); a pipe write under PIPE_BUF is atomic
        'line = "WORKER " + " ".join(f"{k}={os.environ.get(k, \'\')}" for k in keys) + f" SUM={int(t.item())}"',
        'os.write(1, (line + "\\n").encode())',
        // stderr is what --redirects/--tee 2 capture: it lands in --log_dir and, prefixed, in srun's output
        'print(f"STDERR RANK={os.environ[\'RANK\']}", file=sys.stderr, flush=True)',
        'dist.destroy_process_group()',
        '',
      ].join('\n'),
    );
    const port = await freePort();
    const script = join(cluster.dir, 'torchrun.sh');
    const agent =
      `/usr/bin/python3 -m torch.distributed.run --nnodes 2 --nproc_per_node 2 --rdzv_backend c10d` +
      ` --rdzv_endpoint 127.0.0.1:${port} --rdzv_id $SLURM_JOB_ID --redirects 2 --tee 2` +
      ` --log_dir ${cluster.dir}/logs-$SLURM_PROCID ${trainer}`;
    // LOGLEVEL=INFO: without it the agent logs only warnings, and no rendezvous result
    writeFileSync(
      script,
      `#!/bin/bash\n#SBATCH --ntasks=2\nexport LOGLEVEL=INFO\nsrun --ntasks=2 bash -c '${agent}'\n`,
    );
    // stdout (the workers' prints) apart from stderr (agent logs, tee'd worker stderr, glog
    // warnings): with both in one file, one run in six had no line starting with rank 0's WORKER
    const [out, err] = [join(cluster.dir, 'torchrun.out'), join(cluster.dir, 'torchrun.err')];
    const id = await sbatch(['-o', out, '-e', err, script]);
    const job = await finished(id, 60_000);
    const text = readFileSync(out, 'utf8');
    const logs = readFileSync(err, 'utf8');
    expect(job.JobState, `${text}\n${logs}`).toBe('COMPLETED');
    expect(job.ExitCode).toBe('0:0');
    const workers = [...text.matchAll(/^WORKER (RANK=.*SUM=\d+)$/gm)].map((m) =>
      Object.fromEntries(m[1]!.split(' ').map((kv) => kv.split('=') as [string, string])),
    );
    expect(workers.map((w) => w.RANK).sort(), `${text}\n${logs}`).toEqual(['0', '1', '2', '3']);
    for (const w of workers) {
      expect(w).toMatchObject({ WORLD_SIZE: '4', LOCAL_WORLD_SIZE: '2', GROUP_WORLD_SIZE: '2', SUM: '4' });
      expect(w.TORCHELASTIC_RUN_ID).toBe(id);
      // each srun task (SLURM_PROCID) is one agent = one group; its workers get consecutive ranks
      expect(Number(w.RANK)).toBe(Number(w.GROUP_RANK) * 2 + Number(w.LOCAL_RANK));
    }
    expect(logs).toContain('Rendezvous complete for workers. Result:');
    expect(logs).toMatch(/^ {2}group_rank=1$/m);
    expect(logs).toMatch(/^\[default1\]:STDERR RANK=3$/m);
    // --log_dir holds only the workers' own stderr, LOG_DIR/<run_id>_<random>/attempt_0/<local_rank>/stderr.log;
    // the agent's own log (rendezvous result included) goes to srun's stderr only
    const perRank = [0, 1].flatMap((procid) => {
      const logDir = join(cluster.dir, `logs-${procid}`);
      return readdirSync(logDir, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('stderr.log'))
        .map((f) => readFileSync(join(logDir, f), 'utf8').trim());
    });
    expect(perRank.sort()).toEqual([0, 1, 2, 3].map((r) => `STDERR RANK=${r}`));
  }, 75_000);

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
