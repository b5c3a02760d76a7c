/**
 * Known failure signatures (reference §6), as data: what text means what, and which verdict it
 * implies. `source` says where the text comes from: trainer output lines and traceback messages
 * (`output`), the `.anomaly_type` / `.HALT` control files, or a dump file's kind.
 * `implies: null` marks a diagnosis that explains a verdict but does not decide one by itself.
 */

export type Verdict = 'pass' | 'hang' | 'incomplete' | 'nan' | 'crash' | 'slow' | 'stopped';

export interface Signature {
  name: string;
  source: 'output' | 'anomaly' | 'halt' | 'dump';
  pattern: RegExp;
  meaning: string;
  implies: Verdict | null;
}

/** what gloo raises in every rank that came to a collective the others never reached (timeout-culprit.ts) */
export const GLOO_TIMED_OUT = /Timed out waiting \d+ms for (?:recv|send) operation to complete/;

export const SIGNATURES: readonly Signature[] = [
  {
    name: 'non-finite-loss',
    source: 'output',
    pattern:
      /\[train\]\[FATAL\] non-finite loss detected|loss_finite=False|\bloss (?:nan|-?inf)\b|Found NaN\/inf loss/,
    meaning: 'the loss became NaN/Inf; nsa-vibe aborts the run (exit status 0)',
    implies: 'nan',
  },
  {
    name: 'cuda-illegal-memory-access',
    source: 'output',
    pattern: /illegal memory access|device-side assert triggered/,
    meaning:
      'a CUDA kernel read or wrote out of bounds (FA-2 varlen history); rerun with CUDA_LAUNCH_BLOCKING=1',
    implies: 'crash',
  },
  {
    name: 'cuda-oom',
    source: 'output',
    pattern: /CUDA out of memory|OutOfMemoryError/,
    meaning: 'GPU memory exhausted; reduce seq_len/batch or enable gradient checkpointing',
    implies: 'crash',
  },
  {
    name: 'nccl-timeout',
    source: 'output',
    pattern:
      /Watchdog caught collective operation timeout|WorkNCCL\(SeqNum=\d+, OpType=\w+.*\) ran for \d+ milliseconds before timing out|ncclUnhandledCudaError|ncclSystemError|ncclInternalError|DistBackendError|NCCL error/,
    meaning: 'a collective timed out: some rank stopped participating (look for the first stalled rank)',
    implies: 'hang',
  },
  {
    // gloo raises on its timeout (torch 1.13 and 2.11 alike: no watchdog abort): the ranks that
    // time out are the ones that came; the rank that never did is the hang
    name: 'gloo-timeout',
    source: 'output',
    pattern: GLOO_TIMED_OUT,
    meaning:
      'a gloo collective timed out: some rank stopped participating (look for the rank that did not time out)',
    implies: 'hang',
  },
  {
    name: 'ddp-marked-ready-twice',
    source: 'output',
    pattern: /Expected to mark a variable ready only once|has been marked as ready twice/,
    meaning: 'DDP with gradient checkpointing re-ran a parameter hook; keep NSA_DDP_DISABLE_GC=1',
    implies: 'crash',
  },
  {
    name: 'missing-grads',
    source: 'output',
    pattern: /^\[GRAD-TRACE\] \S+ arrived=\d+ missing=[1-9]\d*/,
    meaning: 'some parameters got no gradient on this rank, so DDP waits for them forever',
    implies: null,
  },
  {
    name: 'fp16-unscale',
    source: 'output',
    pattern: /Attempting to unscale FP16 gradients/,
    meaning: 'fp16 weights with GradScaler: the first optimizer step raises; use bf16',
    implies: 'crash',
  },
  {
    name: 'floating-point-exception',
    source: 'output',
    pattern: /Floating point exception/,
    meaning: 'SIGFPE in a native kernel (FA-2 at model init on H100); try NSA_USE_FA2=0',
    implies: 'crash',
  },
  {
    name: 'native-abort',
    source: 'output',
    pattern: /Fatal Python error: (?:Aborted|Segmentation fault)|Aborted \(core dumped\)|Segmentation fault/,
    meaning: 'the process died in native code (SIGABRT/SIGSEGV)',
    implies: 'crash',
  },
  {
    name: 'loader-stall',
    source: 'output',
    pattern: /FineWeb.Edu loader stall/,
    meaning: 'the streaming data loader produced no batch in time',
    implies: 'crash',
  },
  {
    name: 'loader-failed',
    source: 'output',
    pattern: /\[error\] FineWeb.Edu loader failed/,
    meaning: 'the data loader failed (fatal unless --synthetic-on-fail falls back)',
    implies: null,
  },
  {
    name: 'module-not-found',
    source: 'output',
    pattern: /No module named '?nsa'?/,
    meaning: 'the repo root is not importable: run with PYTHONPATH=.',
    implies: 'crash',
  },
  {
    name: 'anomaly-mode-crash',
    source: 'output',
    pattern: /UnboundLocalError: .*'rank'/,
    meaning: 'NSA_DETECT_ANOMALY=1 crashes the trainer at startup',
    implies: 'crash',
  },
  {
    name: 'dtype-mismatch',
    source: 'output',
    pattern: /Expected query, key, and value to have the same dtype|mat1 and mat2 must have the same dtype/,
    meaning: 'mixed dtypes reached attention or a matmul',
    implies: 'crash',
  },
  {
    name: 'ddp-unused-parameters',
    source: 'output',
    pattern: /find_unused_parameters=True was specified .* but did not find any unused parameters/,
    meaning: 'harmless DDP warning (extra overhead)',
    implies: null,
  },
  {
    name: 'halt-detected',
    source: 'output',
    pattern: /\[train\] HALT file detected/,
    meaning: 'the trainer saw .HALT and stopped gracefully',
    implies: 'stopped',
  },
  {
    name: 'external-watchdog-stall',
    source: 'output',
    pattern: /^\[watch\] anomaly: heartbeat stall/,
    meaning: 'scripts/_watchdog.py saw no heartbeat for too long',
    implies: 'hang',
  },
  {
    name: 'nan-loss',
    source: 'anomaly',
    pattern: /^nan_loss/,
    meaning: 'the trainer flagged a non-finite loss',
    implies: 'nan',
  },
  {
    name: 'heartbeat-stall',
    source: 'anomaly',
    pattern: /^heartbeat_stall/,
    meaning: 'the watchdog flagged a stall',
    implies: 'hang',
  },
  {
    name: 'throughput-flatline',
    source: 'anomaly',
    pattern: /^throughput_flatline/,
    meaning: 'toks/s stayed at 0 for several checks',
    implies: 'slow',
  },
  {
    name: 'gate-collapse',
    source: 'anomaly',
    pattern: /^gate_collapse/,
    meaning: 'NSA gates collapsed onto one branch',
    implies: null,
  },
  {
    name: 'zero-grad',
    source: 'anomaly',
    pattern: /^zero_grad/,
    meaning: 'grad_norm was 0 (often a false alarm)',
    implies: null,
  },
  {
    name: 'halt-nan-loss',
    source: 'halt',
    pattern: /nan_loss/,
    meaning: 'the trainer halted on a non-finite loss',
    implies: 'nan',
  },
  {
    name: 'halt-heartbeat-stall',
    source: 'halt',
    pattern: /heartbeat_stall/,
    meaning: 'the watchdog halted a stalled run',
    implies: 'hang',
  },
  {
    name: 'manual-stop',
    source: 'halt',
    pattern: /manual_stop/,
    meaning: 'an operator wrote .HALT',
    implies: 'stopped',
  },
  {
    name: 'watchdog-dump',
    source: 'dump',
    pattern: /^watchdog$/,
    meaning:
      'the in-process watchdog saw no heartbeat for >180 s (false alarm on ranks ≠ 0 without NSA_HEARTBEAT_EVERY=1)',
    implies: 'hang',
  },
];

const OUTPUT = SIGNATURES.filter((s) => s.source === 'output');
// One alternation first: almost no line matches anything, and one regex test is cheap.
const ANY_OUTPUT = new RegExp(OUTPUT.map((s) => `(?:${s.pattern.source})`).join('|'));

/** Output signatures the text matches (usually none). */
export function matchOutput(text: string): Signature[] {
  if (!ANY_OUTPUT.test(text)) return [];
  return OUTPUT.filter((s) => s.pattern.test(text));
}

/** Signatures of a control file's content or a dump kind. */
export function matchSource(source: 'anomaly' | 'halt' | 'dump', text: string): Signature[] {
  return SIGNATURES.filter((s) => s.source === source && s.pattern.test(text.trim()));
}
