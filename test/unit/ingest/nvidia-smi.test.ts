import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  GPU_QUERY_FIELDS,
  parseComputeAppsLine,
  parseGpuCsvLine,
  parseNvidiaSmiLine,
} from '../../../src/ingest/nvidia-smi.js';

// real H200 captures, kept beside the tests (test/fixtures/nsa-vibe-h200/README.md)
const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'nsa-vibe-h200');

describe('nvidia-smi CSV', () => {
  it('parses a --query-gpu line of the real poll', () => {
    expect(parseGpuCsvLine('2026/11/22 02:42:49.719, 0, NVIDIA H200, 637, 143771, 0, 40, 123.20')).toEqual({
      index: 0,
      name: 'NVIDIA H200',
      memUsedMiB: 637,
      memTotalMiB: 143771,
      utilPct: 0,
      tempC: 40,
      powerW: 123.2,
      ts: Date.UTC(2026, 10, 22, 2, 42, 49, 719) / 1000,
    });
    expect(GPU_QUERY_FIELDS).toHaveLength(8);
  });

  it('tolerates [N/A] and [Not Supported]', () => {
    const s = parseGpuCsvLine(
      '2026/11/22 02:42:49.719, 1, NVIDIA A100, [N/A], [N/A], [Not Supported], 40, [N/A]',
    )!;
    expect(s.index).toBe(1);
    expect(s.memUsedMiB).toBeNaN();
    expect(s.utilPct).toBeUndefined();
    expect(s.powerW).toBeUndefined();
    expect(parseComputeAppsLine('4162, python3, [N/A]')!.usedMiB).toBeNaN();
  });

  it('tells the two alternating queries apart in nvsmi_poll.csv', () => {
    const lines = readFileSync(join(FIX, 'nvsmi_poll.csv'), 'utf8').trim().split('\n');
    const parsed = lines.map((l) => parseNvidiaSmiLine(l));
    expect(parsed.every((p) => p !== null)).toBe(true);
    const procs = parsed.filter((p) => p !== null && 'pid' in p);
    expect(procs.length).toBeGreaterThan(0);
    expect(procs[0]).toEqual({ pid: 3616, name: 'python3', usedMiB: 628 });
  });

  it('rejects other lines', () => {
    expect(parseGpuCsvLine('index, name')).toBeNull();
    expect(parseComputeAppsLine('pid, process_name, used_memory')).toBeNull();
    expect(parseNvidiaSmiLine('No devices were found')).toBeNull();
  });
});
