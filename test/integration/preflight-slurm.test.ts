// `nsa-dbg check --slurm`: the probe runs on the allocation's node through a real srun (a one-box
// Slurm cluster of this test's own: test/helpers/slurm-cluster.ts), one line a node, each judged.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CheckRun } from '../../src/preflight/format.js';
import { runCli } from '../helpers/cli.js';
import { type SlurmCluster, startSlurmCluster } from '../helpers/slurm-cluster.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-preflight-slurm-'));
let cluster: SlurmCluster;
beforeAll(async () => {
  cluster = await startSlurmCluster();
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

it('check --slurm --demo: the faulty demo box, probed on the node srun picked', async () => {
  const r = await runCli(
    [
      'check',
      '--slurm',
      '--nodes',
      '1',
      '--demo',
      '--lane',
      'demo-faulty-box',
      '--runs-dir',
      join(work, 'runs'),
      '--json',
    ],
    { env: { ...cluster.env, NSA_DBG_HOME: join(work, 'home') }, timeoutMs: 90_000 },
  );
  expect(r.code, r.stderr).toBe(1);
  const run = JSON.parse(r.stdout) as CheckRun;
  expect(run.boxes.map((b) => b.host)).toEqual([cluster.nodeName]);
  expect(run.boxes[0]!.checks.find((c) => c.id === 'gpu.clocks')!.status).toBe('fail');
});
