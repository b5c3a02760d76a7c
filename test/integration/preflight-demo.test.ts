// `nsa-dbg check --demo`: the demo's nvidia-smi stand-in (a real python3 process) simulates each
// GPU fault the way the real nvidia-smi shows it, so the same parsers and judges catch it; and the
// command itself, built, as a user runs it (GO / NO-GO exit status, usage errors exit 2).
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CheckRun } from '../../src/preflight/format.js';
import { gpuChecks } from '../../src/preflight/judge-gpu.js';
import { readSmiLog } from '../../src/preflight/smi-log.js';
import { parseComputeApps, parseNvlinkStatus } from '../../src/preflight/sources.js';
import { runCli } from '../helpers/cli.js';

const SHIM = join(import.meta.dirname, '..', '..', 'src', 'demo', 'nvidia_smi_shim.py');
const RUN_DIR = mkdtempSync(join(tmpdir(), 'nsa-preflight-'));

function shim(faults: string, args: string[]): string {
  const r = spawnSync('python3', [SHIM, '--demo-run-dir', RUN_DIR, ...args], {
    env: { ...process.env, NSA_DEMO_GPU_FAULTS: faults },
    encoding: 'utf8',
    timeout: 10_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

/** the GPU checks that do not pass, as nsa-dbg would judge the stand-in's output */
function notPassing(faults: string): Record<string, string> {
  const log = readSmiLog(shim(faults, ['-q']));
  const apps = parseComputeApps(
    shim(faults, [
      '--query-compute-apps=gpu_uuid,pid,process_name,used_memory',
      '--format=csv,noheader,nounits',
    ]),
  );
  const nvlink = parseNvlinkStatus(shim(faults, ['nvlink', '-s']));
  return Object.fromEntries(
    gpuChecks(log.gpus, apps, nvlink, undefined)
      .filter((c) => c.status !== 'pass')
      .map((c) => [c.id, c.status]),
  );
}

describe("the demo's nvidia-smi stand-in simulates each fault", () => {
  it('no fault: every GPU check passes', () => {
    expect(notPassing('')).toEqual({});
  });

  it.each([
    ['throttle', 'gpu.clocks', 'fail'],
    ['ecc', 'gpu.ecc', 'fail'],
    ['remap', 'gpu.rows', 'fail'],
    ['persistence-off', 'gpu.persistence', 'warn'],
    ['mig', 'gpu.mig', 'warn'],
    ['foreign-proc', 'gpu.processes', 'fail'],
    ['pcie-x4', 'gpu.pcie', 'warn'],
    ['nvlink-down', 'gpu.nvlink', 'warn'],
  ])('%s → %s %s, nothing else', (fault, id, status) => {
    expect(notPassing(fault)).toEqual({ [id]: status });
  });
});

describe('nsa-dbg check --demo', () => {
  it('the faulty demo box is NO-GO (exit 1) with each fault a check', async () => {
    const r = await runCli(['check', '--demo', '--lane', 'demo-faulty-box', '--json'], { timeoutMs: 90_000 });
    expect(r.code, r.stderr).toBe(1);
    const run = JSON.parse(r.stdout) as CheckRun;
    expect(run.verdict).toBe('NO-GO');
    const bad = Object.fromEntries(
      run.boxes[0]!.checks.filter((c) => c.status === 'fail' || c.status === 'warn').map((c) => [
        c.id,
        c.status,
      ]),
    );
    expect(bad).toMatchObject({
      'gpus.visible': 'fail',
      'gpu.clocks': 'fail',
      'gpu.ecc': 'fail',
      'gpu.rows': 'fail',
      'gpu.processes': 'fail',
      'host.xid': 'fail',
      'gpu.persistence': 'warn',
      'gpu.mig': 'warn',
      'gpu.pcie': 'warn',
      'gpu.nvlink': 'warn',
      'env.collectives': 'warn',
      'measure.matmul': 'warn',
      'measure.allreduce': 'warn',
    });
  });

  it('the healthy demo box: every GPU check passes, and the exit status is the verdict', async () => {
    const r = await runCli(['check', '--demo', '--json'], { timeoutMs: 90_000 });
    const run = JSON.parse(r.stdout) as CheckRun;
    expect(r.code).toBe(run.go ? 0 : 1);
    const gpu = run.boxes[0]!.checks.filter((c) => c.id.startsWith('gpu.') || c.id.startsWith('measure.'));
    expect(gpu.filter((c) => c.status === 'fail' || c.status === 'warn')).toEqual([]);
    expect(gpu.find((c) => c.id === 'measure.matmul')!.measured).toContain('(simulated)');
  });

  it('bad input is one plain line and exit 2', async () => {
    for (const args of [
      ['check', '--hosts', 'onlyone'],
      ['check', '--lane', 'no-such-lane', '--demo'],
      ['check', '--nodes', '2'],
    ]) {
      const r = await runCli(args, { timeoutMs: 30_000 });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toContain('    at ');
    }
  });
});
