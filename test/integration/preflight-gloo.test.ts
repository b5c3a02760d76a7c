// The probe's measurement without GPUs: two ranks all_reduce over gloo on the CPU (a real
// torch.distributed, as CI's python3-torch has it); needs /usr/bin/python3 with torch.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { ProbeOutput } from '../../src/preflight/types.js';

const PROBE = join(import.meta.dirname, '..', '..', 'src', 'preflight', 'probe.py');
const hasTorch =
  spawnSync('/usr/bin/python3', ['-c', 'import torch.distributed'], { timeout: 60_000 }).status === 0;

it.skipIf(!hasTorch)('two CPU ranks: gloo all_reduce bus bandwidth measured by each rank', () => {
  const r = spawnSync('/usr/bin/python3', [PROBE, '--ranks', '2', '--dirs', '["/tmp"]'], {
    env: { ...process.env, CUDA_VISIBLE_DEVICES: '' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  const p = JSON.parse(r.stdout.trim().split('\n').pop()!) as ProbeOutput;
  expect(p.torch.available).toBe(false);
  expect(p.env.CUDA_VISIBLE_DEVICES).toBe('');
  expect(p.measure!.world).toBe(2);
  for (const rank of p.measure!.ranks) {
    expect(rank.error).toBeUndefined();
    expect(rank.allreduce).toMatchObject({ backend: 'gloo', bytes: 64 * 2 ** 20 });
    expect(rank.allreduce!.busGBs).toBeGreaterThan(0);
  }
});
