/**
 * The two measurements, each as a ratio: every rank's bf16 matmul rate against its GPU model's
 * dense rate, and the all_reduce bus bandwidth against the floor for the link between the GPUs.
 */
import { linkFloor, MATMUL_FAIL_RATIO, MATMUL_PASS_RATIO, modelRate } from './expectations.js';
import type { SmiLog } from './smi-log.js';
import type { NvlinkGpu } from './sources.js';
import type { Check, LaneAsk, Measurements } from './types.js';

const sim = (m: Measurements) => (m.simulated ? ' (simulated)' : '');

export function matmulChecks(m: Measurements | null, smi: SmiLog, deviceNames: string[]): Check[] {
  // no rank had a GPU to measure (CUDA hidden or missing): the rate is unknown, which fails
  if (!m || m.world === 0 || !m.ranks.some((r) => r.gpu !== undefined || r.error))
    return [
      {
        id: 'measure.matmul',
        name: 'bf16 matmul rate',
        status: 'fail',
        measured: 'not measured (no GPU torch can use)',
        expected: 'a rate near the GPU model’s',
        source: 'probe: torch bf16 8192² matmul',
      },
    ];
  return m.ranks
    .filter((r) => r.gpu !== undefined || r.error)
    .map((r) => {
      const name = deviceNames[r.gpu ?? 0] ?? smi.gpus[r.gpu ?? 0]?.name ?? '?';
      const ref = modelRate(name);
      const ratio = ref && r.tflops !== undefined ? r.tflops / ref.bf16Tflops : undefined;
      return {
        id: 'measure.matmul',
        name: 'bf16 matmul rate',
        gpu: r.gpu ?? r.rank,
        status:
          r.tflops === undefined
            ? 'fail'
            : ratio === undefined || ratio >= MATMUL_PASS_RATIO
              ? 'pass'
              : ratio >= MATMUL_FAIL_RATIO
                ? 'warn'
                : 'fail',
        measured:
          r.tflops === undefined
            ? `failed: ${r.error ?? 'no result'}`
            : `${r.tflops.toFixed(0)} TFLOPS${ratio === undefined ? '' : ` = ${ratio.toFixed(2)} of expected`}${sim(m)}`,
        expected: ref
          ? `${ref.bf16Tflops} TFLOPS dense bf16 (${ref.model}); pass ≥ ${MATMUL_PASS_RATIO}`
          : `no reference for ${name}`,
        source: ref ? ref.source : 'nsa-dbg knows no rate for this model',
      } satisfies Check;
    });
}

export function allreduceCheck(
  m: Measurements | null,
  smi: SmiLog,
  nvlink: NvlinkGpu[],
  ask: LaneAsk,
  pcieGen: number | undefined,
): Check {
  const base = { id: 'measure.allreduce', name: 'all_reduce bus bandwidth' } as const;
  if (ask.ranksPerNode < 2)
    return {
      ...base,
      status: 'skip',
      measured: 'one rank: no collective',
      expected: 'a floor for ≥ 2 ranks',
      source: ask.ranksSource,
    };
  if (!m || m.world < 2)
    return {
      ...base,
      status: 'fail',
      measured: `not measured (${m?.world ?? 0} rank(s) could start)`,
      expected: `${ask.ranksPerNode} ranks`,
      source: ask.ranksSource,
    };
  const results = m.ranks.map((r) => r.allreduce);
  const failed = m.ranks.find((r) => r.error || !r.allreduce);
  const cpu = results[0]?.backend === 'gloo';
  const floor = linkFloor({
    cpu,
    nvlinkActive: nvlink[0]?.links.filter((l) => l !== null && l !== undefined).length ?? 0,
    model: smi.gpus[0]?.name,
    pcieGen,
  });
  if (failed)
    return {
      ...base,
      status: 'fail',
      measured: `rank ${failed.rank} failed: ${failed.error ?? 'no result'}`,
      expected: `≥ ${floor.busGBs} GB/s (${floor.link})`,
      source: floor.source,
    };
  // the slowest rank sets the collective's pace
  const bus = Math.min(...results.map((r) => r!.busGBs));
  const ratio = bus / floor.busGBs;
  return {
    ...base,
    status: ratio >= 1 ? 'pass' : 'warn',
    measured: `${bus.toFixed(1)} GB/s over ${m.world} ranks (${results[0]!.backend}, ${(results[0]!.bytes / 2 ** 20).toFixed(0)} MiB) = ${ratio.toFixed(2)} of floor${sim(m)}`,
    expected: `≥ ${floor.busGBs} GB/s (${floor.link})`,
    source: floor.source,
  };
}
