/**
 * Step-line grammars of the trainers we know. Each returns the step's metrics or null; `'malformed'`
 * means the line clearly is that trainer's step line but cannot be used (truncated write, garbage).
 */
import type { StepEvent } from './events.js';

export type ParsedStep = Omit<StepEvent, 'kind' | 'rank'>;
export type StepParse = ParsedStep | null | 'malformed';

/** a parsed step as the event of `rank` (0 where the line names none) */
export function stepEvent(p: ParsedStep, rank: number | undefined, ts?: number): StepEvent {
  const ev: StepEvent = { kind: 'step', rank: rank ?? 0, step: p.step, format: p.format };
  if (ts !== undefined) ev.ts = ts;
  if (p.loss !== undefined) ev.loss = p.loss;
  if (p.total !== undefined) ev.total = p.total;
  if (p.lr !== undefined) ev.lr = p.lr;
  if (p.toksPerS !== undefined) ev.toksPerS = p.toksPerS;
  if (p.seconds !== undefined) ev.seconds = p.seconds;
  return ev;
}

export const FLOAT = '-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?|nan|-?inf';

// nsa-vibe (reference §2.2): `step 0001 | loss 5.7014 | lr 2.00e-05 | toks/s 66[ | FSDP][ | grad_norm 0.00]
// [ | fetch 12ms][ | fetch_p50 10ms | fetch_p95 30ms]`
const NSA_STEP = new RegExp(
  `^step (\\d{4,}) \\| loss (${FLOAT}) \\| lr (${FLOAT}) \\| toks/s (\\d+)(?: \\| FSDP)?` +
    `(?: \\| grad_norm (?:${FLOAT}))?(?: \\| fetch \\d+ms)?(?: \\| fetch_p50 \\d+ms \\| fetch_p95 \\d+ms)?\\s*$`,
);
const NSA_STEP_PREFIX = /^step \d+ \|/;

export function num(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  if (s === 'nan') return Number.NaN;
  if (s === 'inf') return Number.POSITIVE_INFINITY;
  if (s === '-inf') return Number.NEGATIVE_INFINITY;
  return Number(s);
}

/** The caller has checked `line.startsWith('step ')`. */
export function parseNsaStep(line: string): StepParse {
  const m = NSA_STEP.exec(line);
  if (m === null) return NSA_STEP_PREFIX.test(line) ? 'malformed' : null;
  return {
    step: Number(m[1]),
    loss: num(m[2])!,
    lr: num(m[3]),
    toksPerS: Number(m[4]),
    format: 'nsa-vibe',
  };
}

// nanoGPT: `iter 100: loss 4.2345, time 123.45ms, mfu 12.34%`; toks/s comes from its
// `tokens per iteration will be: 8,192` banner (stdout-parser.ts)
const NANOGPT = new RegExp(`^iter (\\d+): loss (${FLOAT}), time ([\\d.]+)ms(?:, mfu (-?[\\d.]+)%)?`);

/** a step that carries its duration gets toks/s from the tokens each step takes (nanoGPT's banner) */
export function withTokensPerStep(p: StepParse, tokensPerStep: number | undefined): StepParse {
  if (p === null || p === 'malformed' || tokensPerStep === undefined || !p.seconds) return p;
  return { ...p, toksPerS: Math.round((tokensPerStep / p.seconds) * 10) / 10 };
}

export function parseNanoGpt(line: string): StepParse {
  const m = NANOGPT.exec(line);
  if (m === null) return line.startsWith('iter ') && line.includes(': loss') ? 'malformed' : null;
  return { step: Number(m[1]), loss: num(m[2])!, seconds: Number(m[3]) / 1000, format: 'nanogpt' };
}

// torchtitan (after its `[titan] <date> - root - INFO - ` prefix), torchtitan/components/metrics.py
// at b5bcd76: `step: {step:2}  loss: {loss:8.5f}  grad_norm: {:7.4f}  memory: {:5.2f}GiB({:.2f}%)
// tps: {round(tps):,}  tflops: {:,.2f}  mfu: {:.2f}%` (older versions print `wps:` instead of `tps:`).
// Its `validate step: N  loss: …` line is an evaluation, not a training step.
const TITAN = new RegExp(
  `(?<!validate )step:\\s*(\\d+)\\s+loss:\\s*(${FLOAT})(?:.*?grad_norm:\\s*(?:${FLOAT}))?(?:.*?\\b[tw]ps:\\s*([\\d,]+))?`,
);

export function parseTorchtitan(line: string): StepParse {
  const m = TITAN.exec(line);
  if (m === null) return null;
  return {
    step: Number(m[1]),
    loss: num(m[2])!,
    toksPerS: m[3] === undefined ? undefined : Number(m[3].replace(/,/g, '')),
    format: 'torchtitan',
  };
}

// Hugging Face Trainer's log dicts: `{'loss': 2.3, 'grad_norm': 1.2, 'learning_rate': 5e-05, 'epoch': 0.1}`
const HF_PAIR = /'([\w/.-]+)': ([^,}]+)/g;

/** Key → number of a Python dict literal of scalars, or null when it is not one. */
export function parsePythonDict(line: string): Record<string, number | string> | null {
  if (!line.startsWith("{'") || !line.trimEnd().endsWith('}')) return null;
  const out: Record<string, number | string> = {};
  let count = 0;
  for (const m of line.matchAll(HF_PAIR)) {
    const raw = m[2]!.trim();
    const v = raw === 'nan' ? Number.NaN : raw === 'inf' ? Number.POSITIVE_INFINITY : Number(raw);
    out[m[1]!] = Number.isNaN(v) && raw !== 'nan' ? raw.replace(/^'|'$/g, '') : v;
    count++;
  }
  return count > 0 ? out : null;
}

// A lane's own step regex: named groups `step` and `loss`, optional `toks`, `lr`, and the step's
// time as `ms` or `s`. Also how a learned shape reads (step-shape-learner.ts).
export function parseWithLaneRegex(line: string, re: RegExp, format = 'preset-regex'): StepParse {
  const m = re.exec(line);
  const g = m?.groups;
  if (g?.step === undefined || g.loss === undefined) return null;
  const step = Number(g.step);
  if (!Number.isInteger(step)) return 'malformed';
  const p: ParsedStep = { step, loss: num(g.loss.toLowerCase())!, format };
  if (g.lr !== undefined) p.lr = num(g.lr);
  if (g.toks !== undefined) p.toksPerS = Number(g.toks.replace(/,/g, ''));
  const seconds = g.ms !== undefined ? Number(g.ms) / 1000 : g.s !== undefined ? Number(g.s) : undefined;
  if (seconds !== undefined && Number.isFinite(seconds) && seconds > 0) p.seconds = seconds;
  return p;
}
