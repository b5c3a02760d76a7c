import { describe, expect, it } from 'vitest';
import { gpuChecks } from '../../../src/preflight/judge-gpu.js';
import { readSmiLog } from '../../../src/preflight/smi-log.js';
import { fixture, inject } from './fixtures.js';

const h100 = fixture('h100x1', 'nvidia-smi-q.txt');
const two = fixture('h100x2', 'nvidia-smi-q.txt');
const status = (text: string, id: string, gpu = 0) =>
  gpuChecks(readSmiLog(text).gpus, [], [], undefined).find((c) => c.id === id && c.gpu === gpu)?.status;

describe('nvidia-smi -q of a real H100 (driver 580)', () => {
  it('reads the versions and every GPU', () => {
    const log = readSmiLog(h100);
    expect(log.driver).toBe('580.159.04');
    expect(log.cuda).toBe('13.0');
    expect(log.gpus).toHaveLength(1);
    const g = log.gpus[0]!;
    expect(g.name).toBe('NVIDIA H100 80GB HBM3');
    expect(g.persistence).toBe('Enabled');
    expect(g.migCurrent).toBe('Disabled');
    expect(g.clockReasons.Idle).toBe('Active');
    expect(g.clockReasons['HW Thermal Slowdown']).toBe('Not Active');
    expect(g.eccUncorrected).toEqual({ volatile: 0, aggregate: 0 });
    expect(g.remapped).toEqual({ uncorrectable: 0, pending: 'No', failure: 'No' });
    expect(g.pcie).toEqual({ genMax: 5, genCurrent: 5, widthMax: 16, widthCurrent: 16 });
    expect(g.memory.totalMiB).toBe(81559);
    expect(readSmiLog(two).gpus.map((x) => x.uuid)).toHaveLength(2);
  });

  it('a healthy GPU passes every nvidia-smi check', () => {
    const checks = gpuChecks(readSmiLog(h100).gpus, [], [], undefined);
    expect(checks.filter((c) => c.status !== 'pass' && c.id !== 'gpu.nvlink')).toEqual([]);
  });

  it("the 2-GPU box's real aggregate SRAM parity error on GPU 1 is a warning, GPU 0 passes", () => {
    expect(readSmiLog(two).gpus[1]!.eccUncorrected).toEqual({ volatile: 0, aggregate: 1 });
    expect(status(two, 'gpu.ecc', 1)).toBe('warn');
    expect(status(two, 'gpu.ecc', 0)).toBe('pass');
  });
});

describe('faults injected into the real capture', () => {
  it('HW slowdown, thermal and power brake fail; SW thermal warns', () => {
    expect(status(inject(h100, 'HW Slowdown', 'Active'), 'gpu.clocks')).toBe('fail');
    expect(status(inject(h100, 'HW Thermal Slowdown', 'Active'), 'gpu.clocks')).toBe('fail');
    expect(status(inject(h100, 'HW Power Brake Slowdown', 'Active'), 'gpu.clocks')).toBe('fail');
    expect(status(inject(h100, 'SW Thermal Slowdown', 'Active'), 'gpu.clocks')).toBe('warn');
    // SW Thermal Slowdown is also a counter's name: the reason, not the counter, is read
    expect(status(inject(h100, 'SW Thermal Slowdown', '5 us', 1), 'gpu.clocks')).toBe('pass');
  });

  it('a volatile uncorrected ECC error fails', () => {
    expect(status(inject(h100, 'DRAM Uncorrectable', '3'), 'gpu.ecc')).toBe('fail');
  });

  it('a pending row remap, a remapping failure or an unrepairable memory fails', () => {
    expect(status(inject(h100, 'Pending', 'Yes', 5), 'gpu.rows')).toBe('fail');
    expect(status(inject(h100, 'Remapping Failure Occurred', 'Yes'), 'gpu.rows')).toBe('fail');
    expect(status(inject(h100, 'Unrepairable Memory', 'Yes'), 'gpu.rows')).toBe('fail');
    expect(status(inject(h100, 'Uncorrectable Error', '1'), 'gpu.rows')).toBe('warn');
  });

  it('persistence off and MIG on warn', () => {
    expect(status(inject(h100, 'Persistence Mode', 'Disabled'), 'gpu.persistence')).toBe('warn');
    expect(status(inject(h100, 'Current', 'Enabled'), 'gpu.mig')).toBe('warn');
  });

  it('a link trained at x4 warns; a lower generation at idle does not', () => {
    const x4 = inject(inject(h100, 'Current', '4x', 4), 'Current', '3', 3);
    expect(readSmiLog(x4).gpus[0]!.pcie).toMatchObject({ widthCurrent: 4, genCurrent: 3 });
    expect(status(x4, 'gpu.pcie')).toBe('warn');
    expect(status(inject(h100, 'Current', '1', 3), 'gpu.pcie')).toBe('pass');
  });

  it('memory used with no process listed (another container) counts as foreign', () => {
    expect(status(inject(h100, 'Used', '70000 MiB'), 'gpu.processes')).toBe('fail');
  });
});

describe('nvidia-smi -q of a real H200', () => {
  it('reads it like the H100’s, and every check passes', () => {
    const h200 = fixture('h200x1', 'nvidia-smi-q.txt');
    const g = readSmiLog(h200).gpus[0]!;
    expect(g.name).toBe('NVIDIA H200');
    expect(g.memory.totalMiB).toBeGreaterThan(140_000);
    expect(g.repairs).toEqual([]);
    const checks = gpuChecks(readSmiLog(h200).gpus, [], [], undefined);
    expect(checks.filter((c) => c.status !== 'pass' && c.id !== 'gpu.nvlink')).toEqual([]);
    expect(status(inject(h200, 'HW Power Brake Slowdown', 'Active'), 'gpu.clocks')).toBe('fail');
  });
});
