/**
 * The env flags the lanes know, for the env editor's picker: every variable some lane sets, with
 * what it does (a short line from the trainer's documentation where we have one, else the lanes
 * that set it), and the 0↔1 flip of the one-key toggle.
 */
import type { Preset } from '../presets/preset.js';

const KNOWN: Record<string, string> = {
  NSA_PREFILL_BATCHED: '1 = vectorized prefill; 0 = sequential per-token prefill (the step-5 hang)',
  NSA_DISABLE_AUX_STATS: 'skip gate/fallback/selection stats (no gate_*, fb_*, sel_* heartbeat keys)',
  NSA_HEARTBEAT_EVERY: 'a heartbeat at the top of every step on every rank (stall localisation)',
  NSA_TB_DISABLE: 'no TensorBoard writer',
  NSA_DISABLE_CSV_LOGS: 'no training.csv / k_stats.csv / fallback_counters.csv',
  NSA_USE_FA2: 'FlashAttention-2 for the cmp and win branches',
  NSA_SDPA_NO_FLASH: 'SDPA with flash disabled (mem_efficient and math only)',
  NSA_SDPA_FLASH_ONLY: 'SDPA flash kernel only (can hard-fail for fp32)',
  NSA_TRACE_GRADS: 'trace which parameters get gradients (missing grads in watchdog dumps)',
  NSA_TRACE_MODULE_BWD: 'trace module backward hooks',
  NSA_DETECT_ANOMALY: 'torch autograd anomaly mode',
  NSA_USE_TRITON_SEL: 'Triton selection kernel',
  NSA_USE_SEL_PACK: 'packed selection path',
  NSA_USE_SEL_MASK: 'masked selection path',
  NSA_STOPGRAD_GATES: 'stop gradients through the gates',
  CUDA_LAUNCH_BLOCKING: 'synchronous CUDA launches: errors point at the failing kernel',
};

export interface KnownFlag {
  name: string;
  description: string;
  /** the lanes that set it, and to what */
  lanes: Array<{ lane: string; value: string }>;
}

export function knownFlags(presets: Iterable<Preset>): KnownFlag[] {
  const by = new Map<string, KnownFlag>();
  for (const p of presets)
    for (const [name, value] of Object.entries(p.env)) {
      const f = by.get(name) ?? { name, description: KNOWN[name] ?? '', lanes: [] };
      f.lanes.push({ lane: p.name, value });
      by.set(name, f);
    }
  for (const [name, description] of Object.entries(KNOWN))
    if (!by.has(name)) by.set(name, { name, description, lanes: [] });
  return [...by.values()]
    .map((f) => ({
      ...f,
      description: f.description || `set by ${f.lanes.map((l) => `${l.lane}=${l.value}`).join(', ')}`,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** the one-key toggle: 1 ↔ 0; anything else (unset, "true", a path) becomes 1 */
export function flipFlag(value: string | undefined): string {
  return value === '1' ? '0' : '1';
}
