/**
 * The probe's raw output judged against what the lane asks: every check, then GO when none fails
 * (a warning is said, not blocking). Pure, so a captured probe output is a whole test case.
 */
import {
  diskChecks,
  envFlagsCheck,
  hostMemoryCheck,
  stackChecks,
  stackRungCheck,
  visibleCheck,
  xidCheck,
} from './judge-box.js';
import { gpuChecks } from './judge-gpu.js';
import { allreduceCheck, matmulChecks } from './judge-measure.js';
import { readSmiLog } from './smi-log.js';
import { parseComputeApps, parseNvlinkStatus, parsePcieQuery } from './sources.js';
import type { Check, LaneAsk, ProbeOutput } from './types.js';

export interface BoxCheck {
  go: boolean;
  verdict: 'GO' | 'NO-GO';
  /** one line per failed check, then per warning */
  reasons: string[];
  host: string;
  lane: string;
  /** the probe's own time on the box */
  probeS: number;
  checks: Check[];
}

function smiCheck(p: ProbeOutput, gpus: number): Check {
  return {
    id: 'gpus.nvidia_smi',
    name: 'nvidia-smi answers',
    status: p.smiQuery.code === 0 && gpus > 0 ? 'pass' : 'fail',
    measured:
      p.smiQuery.code === 0
        ? `${gpus} GPU(s)`
        : `exit ${p.smiQuery.code}: ${(p.smiQuery.err || p.smiQuery.out).trim().slice(0, 200)}`,
    expected: '≥ 1 GPU',
    source: 'nvidia-smi -q',
  };
}

const line = (c: Check) =>
  `${c.gpu === undefined ? '' : `GPU ${c.gpu} `}${c.name}: ${c.measured} (expected ${c.expected})`;

export function judgeBox(p: ProbeOutput, ask: LaneAsk): BoxCheck {
  const smi = p.smiQuery.code === 0 ? readSmiLog(p.smiQuery.out) : { gpus: [] };
  const apps = p.smiApps.code === 0 ? parseComputeApps(p.smiApps.out) : [];
  const nvlink = p.smiNvlink.code === 0 ? parseNvlinkStatus(p.smiNvlink.out) : [];
  const load = p.measure?.pcieLoad?.code === 0 ? parsePcieQuery(p.measure.pcieLoad.out) : undefined;
  const pcieGen = load?.[0]?.genMax ?? smi.gpus[0]?.pcie.genMax;
  const checks: Check[] = [
    smiCheck(p, smi.gpus.length),
    visibleCheck(p, smi, ask),
    ...stackChecks(p, smi),
    ...gpuChecks(smi.gpus, apps, nvlink, load),
    xidCheck(p),
    hostMemoryCheck(p, ask),
    ...diskChecks(p, ask),
    stackRungCheck(p, ask),
    envFlagsCheck(p),
    ...matmulChecks(p.measure, smi, p.torch.devices ?? []),
    allreduceCheck(p.measure, smi, nvlink, ask, pcieGen),
  ];
  const fails = checks.filter((c) => c.status === 'fail');
  const warns = checks.filter((c) => c.status === 'warn');
  return {
    go: fails.length === 0,
    verdict: fails.length === 0 ? 'GO' : 'NO-GO',
    reasons: [...fails.map((c) => `fail: ${line(c)}`), ...warns.map((c) => `warn: ${line(c)}`)],
    host: p.host,
    lane: ask.lane,
    probeS: p.elapsedS,
    checks,
  };
}
