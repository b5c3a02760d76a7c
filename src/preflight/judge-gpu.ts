/**
 * Each GPU's health from nvidia-smi: clock event reasons, ECC, retired/remapped memory,
 * persistence, MIG, other processes, the PCIe link and NVLink. Pure: the parsed sources in,
 * checks out.
 */
import { FOREIGN_FAIL_SHARE, FOREIGN_WARN_SHARE } from './expectations.js';
import type { SmiGpu } from './smi-log.js';
import type { ComputeApp, NvlinkGpu, PcieLink } from './sources.js';
import type { Check } from './types.js';

const SMI = 'nvidia-smi -q';
const BAD_REASONS = ['HW Slowdown', 'HW Thermal Slowdown', 'HW Power Brake Slowdown'];
const SUSPECT_REASONS = ['SW Thermal Slowdown'];

function clockCheck(g: SmiGpu, index: number): Check {
  const active = Object.entries(g.clockReasons)
    .filter(([, v]) => v === 'Active')
    .map(([k]) => k);
  const bad = active.filter((r) => BAD_REASONS.includes(r));
  const suspect = active.filter((r) => SUSPECT_REASONS.includes(r));
  const known = Object.keys(g.clockReasons).length > 0;
  return {
    id: 'gpu.clocks',
    name: 'clock event reasons',
    gpu: index,
    status: !known ? 'skip' : bad.length ? 'fail' : suspect.length ? 'warn' : 'pass',
    measured: known ? (active.length ? `active: ${active.join(', ')}` : 'none active') : 'not reported',
    expected: 'no HW slowdown, thermal or power brake',
    source: `${SMI} (Clocks Event Reasons)`,
  };
}

function eccCheck(g: SmiGpu, index: number): Check {
  const { volatile: v, aggregate: a } = g.eccUncorrected;
  return {
    id: 'gpu.ecc',
    name: 'ECC uncorrected errors',
    gpu: index,
    status:
      v === undefined && a === undefined ? 'skip' : (v ?? 0) > 0 ? 'fail' : (a ?? 0) > 0 ? 'warn' : 'pass',
    measured: `volatile ${v ?? 'N/A'}, aggregate ${a ?? 'N/A'}`,
    expected: 'volatile 0 (aggregate 0)',
    source: `${SMI} (ECC Errors)`,
  };
}

function memoryRowsCheck(g: SmiGpu, index: number): Check {
  const pending = g.remapped.pending === 'Yes' || g.retiredPending === 'Yes';
  const failed = g.remapped.failure === 'Yes' || g.repairs.length > 0;
  const ue = g.remapped.uncorrectable ?? 0;
  const known = g.remapped.pending !== undefined || (g.retiredPending ?? 'N/A') !== 'N/A';
  return {
    id: 'gpu.rows',
    name: 'retired / remapped rows',
    gpu: index,
    status: !known ? 'skip' : pending || failed ? 'fail' : ue > 0 ? 'warn' : 'pass',
    measured: known
      ? `remap pending ${g.remapped.pending ?? 'N/A'}, failure ${g.remapped.failure ?? 'N/A'}, uncorrectable ${g.remapped.uncorrectable ?? 'N/A'}, retire pending ${g.retiredPending ?? 'N/A'}${g.repairs.length ? `; ${g.repairs.join(', ')}: Yes` : ''}`
      : 'not reported',
    expected: 'nothing pending (a GPU reset applies it), no remapping failure, no repair pending',
    source: `${SMI} (Remapped Rows, Retired Pages)`,
  };
}

function modeChecks(g: SmiGpu, index: number): Check[] {
  return [
    {
      id: 'gpu.persistence',
      name: 'persistence mode',
      gpu: index,
      status: g.persistence === undefined ? 'skip' : g.persistence === 'Enabled' ? 'pass' : 'warn',
      measured: g.persistence ?? 'not reported',
      expected: 'Enabled (each CUDA start otherwise re-initialises the GPU)',
      source: `${SMI} (Persistence Mode)`,
    },
    {
      id: 'gpu.mig',
      name: 'MIG mode',
      gpu: index,
      status: g.migCurrent === 'Enabled' ? 'warn' : 'pass',
      measured: g.migCurrent ?? 'N/A',
      expected: 'Disabled or N/A (a training run wants the whole GPU)',
      source: `${SMI} (MIG Mode Current)`,
    },
  ];
}

/** every compute process before the check's own CUDA start belongs to someone else */
function foreignCheck(g: SmiGpu, index: number, apps: ComputeApp[]): Check {
  const mine = apps.filter((a) => a.gpuUuid === g.uuid);
  const listed = mine.reduce((s, a) => s + (a.usedMiB ?? 0), 0);
  const total = g.memory.totalMiB ?? Number.NaN;
  // a process of another container is not listed, but its memory shows as used
  const used = Math.max(listed, g.memory.usedMiB ?? 0);
  const share = used / total;
  const who = mine.map((a) => `pid ${a.pid} ${a.name} ${a.usedMiB ?? '?'} MiB`).join('; ');
  return {
    id: 'gpu.processes',
    name: 'other processes and their memory',
    gpu: index,
    status: !Number.isFinite(share)
      ? 'skip'
      : share >= FOREIGN_FAIL_SHARE
        ? 'fail'
        : share >= FOREIGN_WARN_SHARE || mine.length
          ? 'warn'
          : 'pass',
    measured: `${mine.length} process(es)${who ? ` (${who})` : ''}, ${used} of ${total} MiB used`,
    expected: `none; under ${FOREIGN_WARN_SHARE * 100}% of memory used before the run`,
    source: 'nvidia-smi --query-compute-apps, -q (FB Memory Usage)',
  };
}

function pcieCheck(g: SmiGpu, index: number, loads: PcieLink[] | undefined): Check {
  const load = loads?.find((l) => l.index === index);
  const l = load ?? { index, ...g.pcie };
  const { genCurrent, genMax, widthCurrent, widthMax } = l;
  const narrow = widthCurrent !== undefined && widthMax !== undefined && widthCurrent < widthMax;
  const slow = genCurrent !== undefined && genMax !== undefined && genCurrent < genMax;
  const known = widthCurrent !== undefined && widthMax !== undefined;
  return {
    id: 'gpu.pcie',
    name: 'PCIe link',
    gpu: index,
    // an idle link trains down to save power: only a reading under load counts its generation
    status: !known ? 'skip' : narrow || (slow && load) ? 'warn' : 'pass',
    measured: `Gen ${genCurrent ?? '?'} x${widthCurrent ?? '?'}${load ? ' under load' : ' at idle'}`,
    expected: `Gen ${genMax ?? '?'} x${widthMax ?? '?'} (the link's max)`,
    source: load ? 'nvidia-smi --query-gpu=pcie.link.* during the matmul' : `${SMI} (GPU Link Info)`,
  };
}

function nvlinkCheck(index: number, nvlink: NvlinkGpu[]): Check {
  const links = nvlink.find((n) => n.index === index)?.links.filter((l) => l !== undefined) ?? [];
  const active = links.filter((l) => l !== null).length;
  return {
    id: 'gpu.nvlink',
    name: 'NVLink',
    gpu: index,
    status: links.length === 0 || active === 0 ? 'skip' : active < links.length ? 'warn' : 'pass',
    measured: links.length ? `${active} of ${links.length} links active` : 'no NVLink',
    expected: links.length ? 'every link active' : 'where present: every link active',
    source: 'nvidia-smi nvlink -s',
  };
}

export function gpuChecks(
  gpus: SmiGpu[],
  apps: ComputeApp[],
  nvlink: NvlinkGpu[],
  load: PcieLink[] | undefined,
): Check[] {
  return gpus.flatMap((g, i) => [
    clockCheck(g, i),
    eccCheck(g, i),
    memoryRowsCheck(g, i),
    ...modeChecks(g, i),
    foreignCheck(g, i, apps),
    pcieCheck(g, i, load),
    nvlinkCheck(i, nvlink),
  ]);
}
