/**
 * `nvidia-smi --query-gpu=… --format=csv,noheader,nounits` and `--query-compute-apps=…` lines.
 * Fields the driver cannot report come as `[N/A]` / `[Not Supported]` (e.g. memory under MIG,
 * power on some boards): optional fields become undefined, memory becomes NaN (unknown), and the
 * sample is still returned.
 */
import type { GpuProcess, GpuSample } from './events.js';

export const GPU_QUERY_FIELDS = [
  'timestamp',
  'index',
  'name',
  'memory.used',
  'memory.total',
  'utilization.gpu',
  'temperature.gpu',
  'power.draw',
] as const;

export const COMPUTE_APPS_FIELDS = ['pid', 'process_name', 'used_memory'] as const;

/** The nvidia-smi command lines matching the parsers (for pollers). */
export const GPU_QUERY_ARGS = [`--query-gpu=${GPU_QUERY_FIELDS.join(',')}`, '--format=csv,noheader,nounits'];
export const COMPUTE_APPS_ARGS = [
  `--query-compute-apps=${COMPUTE_APPS_FIELDS.join(',')}`,
  '--format=csv,noheader,nounits',
];

function value(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const t = raw.trim();
  if (t === '' || t.startsWith('[')) return undefined;
  // with units (no `nounits`): "1234 MiB", "45 %", "79.41 W"
  const v = Number.parseFloat(t);
  return Number.isFinite(v) ? v : undefined;
}

/** `2026/11/22 02:42:42.279` → epoch seconds. nvidia-smi prints the box's local time; GPU boxes run UTC. */
function timestamp(raw: string): number | undefined {
  const m = /^(\d{4})\/(\d\d)\/(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?$/.exec(raw.trim());
  if (m === null) return undefined;
  const ms = m[7] === undefined ? 0 : Number(`0.${m[7]}`) * 1000;
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, ms) / 1000;
}

/** One `--query-gpu` CSV line (GPU_QUERY_FIELDS, in that order). null when the line is not such a record. */
export function parseGpuCsvLine(line: string): GpuSample | null {
  const parts = line.split(',');
  if (parts.length !== GPU_QUERY_FIELDS.length) return null;
  const [tsRaw, indexRaw, name, usedRaw, totalRaw, utilRaw, tempRaw, powerRaw] = parts;
  const index = value(indexRaw);
  if (index === undefined || !Number.isInteger(index)) return null;
  const used = value(usedRaw);
  // a query record has the memory columns (possibly [N/A]); anything else numeric-free is not one
  if (used === undefined && !usedRaw!.trim().startsWith('[')) return null;
  const sample: GpuSample = {
    index,
    name: name!.trim(),
    memUsedMiB: used ?? Number.NaN,
    memTotalMiB: value(totalRaw) ?? Number.NaN,
  };
  const util = value(utilRaw);
  const temp = value(tempRaw);
  const power = value(powerRaw);
  const ts = timestamp(tsRaw!);
  if (util !== undefined) sample.utilPct = util;
  if (temp !== undefined) sample.tempC = temp;
  if (power !== undefined) sample.powerW = power;
  if (ts !== undefined) sample.ts = ts;
  return sample;
}

/** One `--query-compute-apps=pid,process_name,used_memory` line. */
export function parseComputeAppsLine(line: string): GpuProcess | null {
  const parts = line.split(',');
  if (parts.length < 3) return null;
  const pid = Number(parts[0]!.trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const usedRaw = parts[parts.length - 1]!;
  const used = value(usedRaw);
  if (used === undefined && !usedRaw.trim().startsWith('[')) return null;
  // a process path may itself contain commas
  const name = parts.slice(1, -1).join(',').trim();
  return { pid, name, usedMiB: used ?? Number.NaN };
}

/** A line from a file where both queries alternate (like nvsmi_poll.csv): tell them apart by shape. */
export function parseNvidiaSmiLine(line: string): GpuSample | GpuProcess | null {
  const n = line.split(',').length;
  if (n === GPU_QUERY_FIELDS.length) return parseGpuCsvLine(line);
  if (n === COMPUTE_APPS_FIELDS.length) return parseComputeAppsLine(line);
  return null;
}
