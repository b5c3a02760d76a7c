/**
 * Realistic dashboard states built from the nsa-vibe H200 captures (shared fixtures `batched/`):
 * pid 4162, loss ≈ 5.70, ~75 toks/s, torch 92/412 MiB, the step-5 freeze, the SIGUSR1 dump of the
 * main thread inside grouped_selection_attention_packed.
 */
import type { Frame } from '../../src/ingest/events.js';
import {
  type DashboardState,
  type DumpView,
  emptyDashboardState,
  type LogLine,
  type RankView,
  type SeriesPoint,
} from '../../src/session/state.js';

const STARTED = 1_795_315_473_000;

export const LOSS: SeriesPoint[] = [
  5.7014, 5.7202, 5.6885, 5.7117, 5.7391, 5.7054, 5.7073, 5.6943, 5.6987, 5.7074, 5.6697, 5.7099, 5.7179,
  5.6889, 5.7102, 5.71, 5.7019,
].map((value, i) => ({ step: i + 1, value }));
export const TOKS: SeriesPoint[] = [66, 80, 81, 75, 19, 85, 70, 85, 79, 74, 78, 74, 89, 73, 80, 78, 72].map(
  (value, i) => ({
    step: i + 1,
    value,
  }),
);

const STDOUT = [
  '[boot] loading config /root/nsa-vibe/configs/lane_batched.yaml',
  '[env-guard] ok',
  '[boot] effective config: S=512 B=1 accum=1 gc=off',
  '[train] dataset=synthetic tokenizer=byte',
  '[train] gradient_checkpointing=off',
  '[debug] step 1: input shape torch.Size([1, 512]), seq_len 512',
  'step 0001 | loss 5.7014 | lr 2.00e-05 | toks/s 66',
  '[debug] step 2: input shape torch.Size([1, 512]), seq_len 512',
  'step 0002 | loss 5.7202 | lr 3.00e-05 | toks/s 80',
  '[debug] step 3: input shape torch.Size([1, 512]), seq_len 512',
  'step 0003 | loss 5.6885 | lr 4.00e-05 | toks/s 81',
  '[debug] step 4: input shape torch.Size([1, 512]), seq_len 512',
  'step 0004 | loss 5.7117 | lr 5.00e-05 | toks/s 75',
  '[debug] step 5: input shape torch.Size([1, 512]), seq_len 512',
];

/** `count` log lines: the real stdout first, then numbered step lines. */
export function logLines(count: number): LogLine[] {
  return Array.from({ length: count }, (_, i) => ({
    id: i,
    text:
      STDOUT[i] ??
      `step ${String(i).padStart(4, '0')} | loss 5.70${i % 10} | lr 1.00e-04 | toks/s 7${i % 10}`,
  }));
}

const f = (file: string, line: number, fn: string): Frame => ({ file, line, function: fn });

export const DUMP: DumpView = {
  file: '/root/nsa-vibe/artifacts/h200/batched/stackdump_1795315501.txt',
  kind: 'signal',
  signal: 10,
  mainThread: [
    f('/root/nsa-vibe/nsa/core/attention_kernels.py', 298, 'grouped_selection_attention_packed'),
    f('/root/nsa-vibe/nsa/core/nsa_attention.py', 1269, '_forward_prefill_batched'),
    f('/root/nsa-vibe/nsa/core/nsa_attention.py', 542, 'forward'),
    f('/root/venv/lib/python3.12/site-packages/torch/nn/modules/module.py', 1790, '_call_impl'),
    f('/root/nsa-vibe/nsa/model/llama_block_nsa.py', 102, 'forward'),
    f('/root/nsa-vibe/scripts/train_showcase.py', 115, 'forward'),
    f('/root/nsa-vibe/scripts/train_showcase.py', 1247, 'main'),
    f('/root/nsa-vibe/scripts/train_showcase.py', 1539, '<module>'),
  ],
  otherThreads: [
    { name: 'Thread-1', top: f('/usr/lib/python3.12/threading.py', 359, 'wait') },
    { name: 'Thread-2 (_watchdog)', top: f('/root/nsa-vibe/scripts/train_showcase.py', 1100, '_watchdog') },
  ],
};

export function rank0(partial: Partial<RankView> = {}): RankView {
  return {
    rank: 0,
    step: 17,
    phase: 'progress',
    lastBeatAgeS: 3.1,
    expectedS: 7.2,
    thresholdS: 21.6,
    gaps: [7.7, 0.0, 6.4, 0.0, 6.3, 0.0, 6.8, 0.0, 26.4, 0.0, 6.5],
    stall: null,
    memAllocMiB: 92,
    memReservedMiB: 412,
    ...partial,
  };
}

export const STALLED = rank0({
  step: 6,
  phase: 'step_start',
  lastBeatAgeS: 14,
  stall: { step: 6, where: 'in-step', silenceS: 14, cpuBusy: true, hang: true },
});

/** A healthy run at step 17 of 40, with a dump on screen. */
export function runningState(partial: Partial<DashboardState> = {}): DashboardState {
  return emptyDashboardState({
    target: 'local',
    lane: 'batched-prefill',
    laneDescription: 'baseline plus the batched prefill fix',
    runId: 'run-1',
    runState: 'running',
    startedAt: STARTED,
    now: STARTED + 62_000,
    step: 17,
    totalSteps: 40,
    pid: 4162,
    loss: LOSS,
    toks: TOKS,
    ranks: [rank0()],
    gpu: {
      available: true,
      simulated: false,
      gpus: [
        {
          index: 0,
          name: 'NVIDIA H200',
          memUsedMiB: 2123,
          memTotalMiB: 143771,
          utilPct: 1,
          tempC: 41,
          powerW: 123.2,
        },
      ],
      processes: [{ pid: 3616, name: 'python3', usedMiB: 1772 }],
      vramLimitMiB: 40_000,
      torchAllocMiB: 92,
      torchReservedMiB: 412,
      peakReservedMiB: 412,
    },
    log: { lines: logLines(14), total: 14 },
    dump: DUMP,
    ...partial,
  });
}
