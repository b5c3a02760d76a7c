import { describe, expect, it } from 'vitest';
import {
  hasPtraceCapability,
  parseComputeApps,
  parseDf,
  parseMeminfo,
  parseNvlinkStatus,
  parsePcieQuery,
  parseXids,
} from '../../../src/preflight/sources.js';
import { fixture, probe } from './fixtures.js';

describe('the probe’s other sources, from real captures', () => {
  it('compute apps: the foreign process of the device run', () => {
    expect(parseComputeApps(fixture('h100x1', 'compute-apps-foreign.csv'))).toEqual([
      { gpuUuid: 'GPU-5796a99a-22a2-d019-eefa-03d6b88f11fa', pid: 1037, name: 'python3', usedMiB: 64960 },
    ]);
    expect(parseComputeApps('')).toEqual([]);
    // a process path with a comma stays whole
    expect(parseComputeApps('GPU-1, 7, /opt/a,b/python, 12')[0]).toMatchObject({
      name: '/opt/a,b/python',
      usedMiB: 12,
    });
  });

  it('nvlink -s: 18 active links a GPU on the 2×H100 box; none on the 1-GPU box', () => {
    const two = parseNvlinkStatus(fixture('h100x2', 'nvlink-s.txt'));
    expect(two.map((g) => g.index)).toEqual([0, 1]);
    expect(two[1]!.links).toHaveLength(18);
    expect(two[1]!.links.every((l) => l === 26.562)).toBe(true);
    expect(parseNvlinkStatus(probe('h100x1', 'healthy').smiNvlink.out)).toEqual([]);
    const down = fixture('h100x2', 'nvlink-s.txt').replace(/Link 17: 26\.562 GB\/s/, 'Link 17: <inactive>');
    expect(parseNvlinkStatus(down)[0]!.links[17]).toBeNull();
  });

  it('the PCIe query under load', () => {
    expect(parsePcieQuery(fixture('h100x2', 'pcie-idle.csv'))).toEqual([
      { index: 0, genCurrent: 5, genMax: 5, widthCurrent: 16, widthMax: 16 },
      { index: 1, genCurrent: 5, genMax: 5, widthCurrent: 16, widthMax: 16 },
    ]);
  });

  it('df -Pk of the nearly full tmpfs and of the root disk', () => {
    expect(parseDf(fixture('h100x1', 'df-small.txt'))).toMatchObject({
      totalKiB: 65536,
      mount: '/mnt/nsa-small',
    });
    expect(parseDf(fixture('h100x1', 'df-small.txt'))!.availKiB).toBeLessThan(8192);
    expect(parseDf(probe('h100x1', 'healthy').df[0]!.out)).toMatchObject({
      filesystem: '/dev/vda',
      mount: '/',
    });
    expect(parseDf('df: /nope: No such file or directory')).toBeNull();
  });

  it('/proc/meminfo and CapEff', () => {
    const p = probe('h100x1', 'healthy');
    const m = parseMeminfo(p.meminfo!);
    expect(m.MemTotal).toBeGreaterThan(100 * 1024 * 1024);
    expect(m.MemAvailable).toBeLessThanOrEqual(m.MemTotal!);
    expect(hasPtraceCapability(p.procStatus!)).toBe(true);
    expect(hasPtraceCapability('CapEff:\t00000000a80425fb\n')).toBe(false);
  });

  it('XIDs in the kernel log: none in the real one, one injected', () => {
    const real = fixture('h100x1', 'dmesg-nvrm.txt');
    expect(real).toContain('NVRM: loading NVIDIA');
    expect(parseXids(real)).toEqual([]);
    const line =
      '[ 8812.118245] NVRM: Xid (PCI:0000:04:00): 79, pid=2211, name=python3, GPU has fallen off the bus.';
    expect(parseXids(`${real}${line}\n`)).toEqual([{ pci: '0000:04:00', code: 79, line }]);
  });
});
