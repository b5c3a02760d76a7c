/**
 * The box around the GPUs, as the lane will meet it: GPUs torch sees against the lane's ranks,
 * the driver/CUDA/torch/NCCL stack, host memory, disk at the run dir and out_dir, which stack rung
 * will answer, the env flags that change collectives, and XIDs in the kernel log. Pure.
 */
import {
  DISK_FAIL_GIB,
  DISK_WARN_GIB,
  FATAL_XIDS,
  MIN_FREE_RAM_GIB_PER_RANK,
  TRANSPORT_OFF,
} from './expectations.js';
import type { SmiLog } from './smi-log.js';
import { hasPtraceCapability, parseDf, parseMeminfo, parseXids } from './sources.js';
import type { Check, LaneAsk, ProbeOutput } from './types.js';

const GIB_KIB = 1024 * 1024;
const gib = (kib: number) => `${(kib / GIB_KIB).toFixed(1)} GiB`;

export function visibleCheck(p: ProbeOutput, smi: SmiLog, ask: LaneAsk): Check {
  const seen = p.torch.error ? undefined : (p.torch.deviceCount ?? 0);
  const cvd = p.env.CUDA_VISIBLE_DEVICES;
  const hidden = cvd !== undefined && seen !== undefined && seen < smi.gpus.length;
  return {
    id: 'gpus.visible',
    name: 'GPUs visible to the lane',
    status: seen === undefined ? 'fail' : seen >= ask.ranksPerNode ? 'pass' : 'fail',
    measured:
      seen === undefined
        ? 'unknown (torch did not load)'
        : `${seen} seen by torch, ${smi.gpus.length} listed by nvidia-smi${hidden ? ` (CUDA_VISIBLE_DEVICES=${JSON.stringify(cvd)})` : ''}`,
    expected: `≥ ${ask.ranksPerNode} (ranks per node)`,
    source: ask.ranksSource,
  };
}

/** `13.0` ≥ `12.8`: the driver's CUDA must be at least the one torch was built for */
function cudaAtLeast(driver: string, built: string): boolean {
  const [a, b] = [driver, built].map((v) => v.split('.').map(Number));
  return a![0]! > b![0]! || (a![0] === b![0] && (a![1] ?? 0) >= (b![1] ?? 0));
}

export function stackChecks(p: ProbeOutput, smi: SmiLog): Check[] {
  const t = p.torch;
  const versions = `driver ${smi.driver ?? '?'} (CUDA ${smi.cuda ?? '?'}), torch ${t.version ?? '-'} (CUDA ${t.cuda ?? '-'}), NCCL ${t.nccl ?? '-'}`;
  const tooOld = !!(smi.cuda && t.cuda && !cudaAtLeast(smi.cuda, t.cuda));
  return [
    {
      id: 'torch.versions',
      name: 'driver, CUDA, torch and NCCL',
      status: t.error || !t.cuda || tooOld ? 'fail' : t.nccl ? 'pass' : 'warn',
      measured: t.error ? `torch: ${t.error}` : versions,
      expected: 'torch with CUDA, built for a CUDA the driver supports, with NCCL',
      source: `the lane's Python (${p.python} ${p.pythonVersion}), nvidia-smi -q`,
    },
    {
      id: 'torch.cuda',
      name: 'torch.cuda.is_available()',
      status: t.available ? 'pass' : 'fail',
      measured: t.error ? 'torch missing' : String(!!t.available),
      expected: 'True',
      source: "the lane's Python and env",
    },
  ];
}

export function hostMemoryCheck(p: ProbeOutput, ask: LaneAsk): Check {
  const m = parseMeminfo(p.meminfo ?? '');
  const avail = m.MemAvailable;
  const want = MIN_FREE_RAM_GIB_PER_RANK * ask.ranksPerNode * GIB_KIB;
  return {
    id: 'host.memory',
    name: 'free host memory',
    status: avail === undefined ? 'skip' : avail < want / 4 ? 'fail' : avail < want ? 'warn' : 'pass',
    measured: avail === undefined ? 'not readable' : `${gib(avail)} available of ${gib(m.MemTotal ?? 0)}`,
    expected: `≥ ${MIN_FREE_RAM_GIB_PER_RANK} GiB a rank (${ask.ranksPerNode} rank(s))`,
    source: '/proc/meminfo (MemAvailable); nsa-dbg floor',
  };
}

export function diskChecks(p: ProbeOutput, ask: LaneAsk): Check[] {
  const which = [
    { id: 'disk.run_dir', name: 'disk at the run dir', path: ask.runDir, why: 'the run dir' },
    { id: 'disk.out_dir', name: "disk at the trainer's out_dir", path: ask.outDir, why: ask.outDirSource },
  ];
  return which.map((w) => {
    const d = p.df.find((x) => x.path === w.path);
    const row = d && d.code === 0 ? parseDf(d.out) : null;
    return {
      id: w.id,
      name: w.name,
      status: !row
        ? 'warn'
        : row.availKiB < DISK_FAIL_GIB * GIB_KIB
          ? 'fail'
          : row.availKiB < DISK_WARN_GIB * GIB_KIB
            ? 'warn'
            : 'pass',
      measured: row
        ? `${gib(row.availKiB)} free of ${gib(row.totalKiB)} on ${row.mount} (${w.path})`
        : `df failed at ${w.path}: ${(d?.err ?? '').trim() || 'no answer'}`,
      expected: `≥ ${DISK_WARN_GIB} GiB free (fail under ${DISK_FAIL_GIB} GiB)`,
      source: `df -Pk; ${w.why}`,
    };
  });
}

/** which rung answers a stack request: the hook in every rank, else py-spy with ptrace allowed */
export function stackRungCheck(p: ProbeOutput, ask: LaneAsk): Check {
  const scope = Number.parseInt(p.ptraceScope ?? '', 10);
  const cap = hasPtraceCapability(p.procStatus ?? '');
  // py-spy attaches to a process it did not start: scope 0, or CAP_SYS_PTRACE below scope 3
  const ptraceOk = scope === 0 || Number.isNaN(scope) || (cap === true && scope < 3);
  const pyspy = p.pyspy && ptraceOk;
  const rung = ask.stackSignal !== 0 ? `the hook (signal ${ask.stackSignal})` : pyspy ? 'py-spy' : 'none';
  return {
    id: 'stacks.rung',
    name: 'stack rung that will answer',
    status: rung === 'none' ? 'warn' : 'pass',
    measured: `${rung}; py-spy ${p.pyspy ?? 'absent'}; ptrace_scope ${Number.isNaN(scope) ? 'n/a' : scope}, CAP_SYS_PTRACE ${cap === undefined ? '?' : cap ? 'yes' : 'no'}`,
    expected: 'the hook, or py-spy with ptrace allowed',
    source: `lane ${ask.lane} (stackSignal), PATH, /proc/sys/kernel/yama/ptrace_scope, /proc/self/status`,
  };
}

export function envFlagsCheck(p: ProbeOutput): Check {
  const named = Object.entries(p.env)
    // NVIDIA's containers set NCCL_VERSION to the bundled library's version: it changes nothing
    .filter(([k]) => !['CUDA_VISIBLE_DEVICES', 'CUDA_DEVICE_ORDER', 'NCCL_VERSION'].includes(k))
    .sort(([a], [b]) => a.localeCompare(b));
  const off = named.filter(([k, v]) => TRANSPORT_OFF[k] === v.trim());
  return {
    id: 'env.collectives',
    name: 'env flags that change collectives',
    status: off.length ? 'warn' : 'pass',
    measured: named.length ? named.map(([k, v]) => `${k}=${v}`).join(' ') : 'none set',
    expected: 'no transport switched off (NCCL_P2P_DISABLE, NCCL_IB_DISABLE, …)',
    source: "the lane's env over the box's",
  };
}

export function xidCheck(p: ProbeOutput): Check {
  const log = p.kernelLog;
  const base = { id: 'host.xid', name: 'XID errors in the kernel log' } as const;
  if (log.text === null)
    return {
      ...base,
      status: 'skip',
      measured: `not readable (${log.error || 'permission'})`,
      expected: 'no XID',
      source: log.source,
    };
  const xids = parseXids(log.text);
  const fatal = xids.filter((x) => FATAL_XIDS.has(x.code));
  return {
    ...base,
    status: fatal.length ? 'fail' : xids.length ? 'warn' : 'pass',
    measured: xids.length
      ? `${xids.length} XID(s): ${[...new Set(xids.map((x) => `${x.code} on ${x.pci}`))].join(', ')}`
      : 'none',
    expected: 'no XID (fatal: 48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 123)',
    source: `${log.source}; NVIDIA XID catalogue`,
  };
}
