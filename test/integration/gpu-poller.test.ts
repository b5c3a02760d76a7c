import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GpuPoller, type GpuUpdate } from '../../src/session/gpu-poller.js';
import { LocalTarget } from '../../src/targets/local.js';
import { waitUntil } from '../helpers/wait.js';

const target = new LocalTarget();
let poller: GpuPoller | null = null;
afterEach(() => {
  poller?.stop();
  poller = null;
});

function fakeSmi(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'nsa-smi-'));
  const path = join(dir, 'nvidia-smi');
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

function start(smi: string[], opts = {}): GpuUpdate[] {
  const updates: GpuUpdate[] = [];
  poller = new GpuPoller(target, smi, (u) => updates.push(u), opts);
  poller.start();
  return updates;
}

describe('GPU poller against real processes', () => {
  it('reports a missing nvidia-smi with how to get it, and does not throw', async () => {
    const updates = start(['/nonexistent/nvidia-smi']);
    const u = await waitUntil(() => updates.find((x) => !x.available), { what: 'missing report' });
    expect(u.message).toMatch(/nvidia-smi not found on local/);
    expect(u.message).toMatch(/install/);
  });

  it('parses the long-lived -lms stream and the per-process query', async () => {
    const smi = fakeSmi(
      [
        'case "$*" in',
        '  *query-compute-apps*) echo "4162, python3, 912";;',
        '  *) while true; do echo "2026/11/22 02:42:49.719, 0, NVIDIA H200, 637, 143771, 97, 40, 123.20"; sleep 0.1; done;;',
        'esac',
      ].join('\n'),
    );
    const updates = start([smi], { procEveryMs: 200 });
    const u = await waitUntil(() => updates.find((x) => x.available && x.processes.length > 0), {
      what: 'samples',
    });
    expect(u.gpus[0]).toMatchObject({
      index: 0,
      name: 'NVIDIA H200',
      memUsedMiB: 637,
      memTotalMiB: 143771,
      utilPct: 97,
    });
    expect(u.processes[0]).toEqual({ pid: 4162, name: 'python3', usedMiB: 912 });
  });

  it('asks for the process list less often where one query is slow (a loaded box)', async () => {
    // each process query takes 0.3 s and leaves a mark: at least 20 × 0.3 s = 6 s between them,
    // where the asked-for 100 ms would have made about 25 in 3 s
    const marks = join(mkdtempSync(join(tmpdir(), 'nsa-smi-marks-')), 'asked');
    const smi = fakeSmi(
      [
        'case "$*" in',
        `  *query-compute-apps*) echo x >> ${marks}; sleep 0.3; echo "4162, python3, 912";;`,
        '  *) while true; do echo "2026/11/22 02:42:49.719, 0, NVIDIA H200, 637, 143771, 97, 40, 123.20"; sleep 0.1; done;;',
        'esac',
      ].join('\n'),
    );
    const updates = start([smi], { procEveryMs: 100 });
    await waitUntil(() => updates.find((x) => x.processes.length > 0), { what: 'the first process list' });
    await new Promise((r) => setTimeout(r, 3000));
    expect(readFileSync(marks, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('notices an nvidia-smi that hangs and restarts it', async () => {
    const smi = fakeSmi(
      'echo "2026/11/22 02:42:49.719, 0, NVIDIA H200, 637, 143771, 97, 40, 123.20"; exec sleep 60',
    );
    const updates = start([smi], { staleMs: 600 });
    const u = await waitUntil(() => updates.find((x) => !x.available && /silent/.test(x.message ?? '')), {
      what: 'hang report',
    });
    expect(u.message).toMatch(/nvidia-smi silent for 0.6s/);
    // restarted: a fresh sample arrives after the report
    const at = updates.indexOf(u);
    await waitUntil(() => updates.slice(at + 1).some((x) => x.available), { what: 'restart' });
  });
});
