/**
 * The env flags the lanes know, for the env editor: every variable some lane sets, plus the
 * trainer's flag table below, with what each does (a short line from the trainer's documentation
 * where we have one, else the lanes that set it) and the values worth offering (the table's, then
 * what the lanes set it to). Also the 0↔1 flip of the one-key toggle.
 */
import type { Lane } from '../lanes/lane.js';

const BINARY = ['0', '1'];

interface TableEntry {
  description: string;
  /** the values the trainer takes; 0/1 flags flip with one key, others open the value entry */
  values: string[];
}

const flag = (description: string, values: string[] = BINARY): TableEntry => ({ description, values });

/** nsa-vibe's flags (its nsa/core/*.py and train_showcase.py), as the reference documents them */
const TABLE: Record<string, TableEntry> = {
  NSA_PREFILL_BATCHED: flag('1 = vectorized prefill; 0 = sequential per-token prefill (the step-5 hang)'),
  NSA_DISABLE_AUX_STATS: flag('skip gate/fallback/selection stats (no gate_*, fb_*, sel_* heartbeat keys)'),
  NSA_HEARTBEAT_EVERY: flag('a heartbeat at the top of every step on every rank (stall localisation)'),
  NSA_TB_DISABLE: flag('no TensorBoard writer'),
  NSA_DISABLE_CSV_LOGS: flag('no training.csv / k_stats.csv / fallback_counters.csv'),
  NSA_USE_FA2: flag('FlashAttention-2 for the cmp and win branches'),
  NSA_SDPA_NO_FLASH: flag('SDPA with flash disabled (mem_efficient and math only)'),
  NSA_SDPA_FLASH_ONLY: flag('SDPA flash kernel only (can hard-fail for fp32)'),
  NSA_TRACE_GRADS: flag('trace which parameters get gradients (missing grads in watchdog dumps)'),
  NSA_TRACE_MODULE_BWD: flag('trace module backward hooks'),
  NSA_DETECT_ANOMALY: flag('torch autograd anomaly mode'),
  NSA_USE_TRITON_SEL: flag('Triton selection kernel'),
  NSA_USE_SEL_PACK: flag('packed selection path'),
  NSA_USE_SEL_MASK: flag('masked selection path'),
  NSA_USE_SEL_VARLEN: flag('batched path: varlen selection'),
  NSA_FORCE_SEL_MASK: flag('masked selection first in every path (critical for speed on A100)'),
  NSA_FORCE_PARITY: flag('reference paths only: no pack, mask, FA-2, CUDA or varlen fast paths'),
  NSA_STOPGRAD_GATES: flag('stop gradients through the gates'),
  NSA_FORCE_BRANCH: flag('one-hot gate on one branch (branch isolation)', ['cmp', 'sel', 'win']),
  NSA_SEL_RANGES_V2: flag('GPU-vectorized index→range conversion (0: the CPU loop)'),
  NSA_NVTX: flag('NVTX ranges for nsys'),
  NSA_DEBUG_LOG: flag('all NSA-LOG lines on stdout'),
  NSA_STRICT_ASSERTS: flag('causality and bounds asserts (GPU syncs)'),
  NSA_FA2_MIN_LEN_WIN: flag('FA-2 for win from this length; -1 disables it', ['16', '-1']),
  NSA_FA2_MIN_LEN_CMP: flag('FA-2 for cmp from this length; -1 disables it', ['16', '-1']),
  NSA_SEL_TRITON_FORCE_PATH: flag('Triton selection sub-path', ['auto', 'dense', 'varlen']),
  CUDA_LAUNCH_BLOCKING: flag('synchronous CUDA launches: errors point at the failing kernel'),
  TORCH_DISTRIBUTED_DEBUG: flag('torch.distributed checks and logs', ['OFF', 'INFO', 'DETAIL']),
  NCCL_DEBUG: flag('NCCL logging', ['WARN', 'INFO', 'TRACE']),
  PYTORCH_CUDA_ALLOC_CONF: flag('CUDA caching allocator settings', [
    'expandable_segments:True',
    'expandable_segments:True,max_split_size_mb:256',
  ]),
};

export interface KnownFlag {
  name: string;
  description: string;
  /** the lanes that set it, and to what */
  lanes: Array<{ lane: string; value: string }>;
  /** the values to offer: the trainer table's, then the lanes' (no repeats) */
  values: string[];
}

export function knownFlags(lanes: Iterable<Lane>): KnownFlag[] {
  const by = new Map<string, KnownFlag>();
  const entry = (name: string): KnownFlag =>
    by.get(name) ?? { name, description: TABLE[name]?.description ?? '', lanes: [], values: [] };
  for (const p of lanes)
    for (const [name, value] of Object.entries(p.env)) {
      const f = entry(name);
      f.lanes.push({ lane: p.name, value });
      by.set(name, f);
    }
  for (const name of Object.keys(TABLE)) by.set(name, entry(name));
  return [...by.values()]
    .map((f) => ({
      ...f,
      description: f.description || `set by ${f.lanes.map((l) => `${l.lane}=${l.value}`).join(', ')}`,
      values: [...new Set([...(TABLE[f.name]?.values ?? []), ...f.lanes.map((l) => l.value)])],
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** a flag the one-key toggle can flip: every value it is known to take is 0 or 1 */
export function isBinaryFlag(f: Pick<KnownFlag, 'values'> | undefined): boolean {
  return !f || f.values.every((v) => v === '0' || v === '1');
}

/** the one-key toggle: 1 ↔ 0; anything else (unset, "true", a path) becomes 1 */
export function flipFlag(value: string | undefined): string {
  return value === '1' ? '0' : '1';
}

/**
 * The values the value entry offers for `name`, filtered by what is typed: the typed text itself
 * first (Enter takes it as it is), then the known values that contain it.
 */
export function valueChoices(flags: readonly KnownFlag[], name: string, typed: string): string[] {
  const known = flags.find((f) => f.name === name)?.values ?? [];
  const t = typed.toLowerCase();
  const matches = known.filter((v) => v.toLowerCase().includes(t));
  return typed && !known.includes(typed) ? [typed, ...matches] : matches;
}
