/**
 * Step lines of more trainers people run, each as its source prints it (the commit each was read
 * at is in test/fixtures/trainer-formats/README.md). Like step-formats.ts: the step's metrics, null
 * when the line is not one, `'malformed'` when it clearly is one but cannot be used.
 */
import { parsePythonJson } from './python-json.js';
import { FLOAT, num, type ParsedStep, type StepParse } from './step-formats.js';

// minGPT, projects/chargpt/chargpt.py: `iter_dt {iter_dt * 1000:.2f}ms; iter {iter_num}: train loss
// {loss:.5f}`. Its trainer sets iter_dt after the callback that prints it, so the figure is the
// previous iteration's duration, and iteration 0 prints 0.00ms (nothing measured yet): no time.
const MINGPT = new RegExp(`^iter_dt (\\d+(?:\\.\\d+)?)ms; iter (\\d+): train loss (${FLOAT})\\s*$`);

/** The caller has checked `line.startsWith('iter_dt ')`. */
export function parseMinGpt(line: string): StepParse {
  const m = MINGPT.exec(line);
  if (m === null) return line.includes(': train loss') ? 'malformed' : null;
  const ms = Number(m[1]);
  const p: ParsedStep = { step: Number(m[2]), loss: num(m[3])!, format: 'mingpt' };
  if (ms > 0) p.seconds = ms / 1000;
  return p;
}

// Megatron-LM, megatron/training/training.py training_log(): ` [<date>] iteration {:8d}/{:8d} |`
// then ` <name>: <value> |` fields: `elapsed time per iteration (ms)` (averaged over the log
// interval), `learning rate`, `lm loss` (or another `<x> loss`), `loss scale`, … Older versions
// print no date. (A torchrun prefix with its own space before the line's leaves two spaces.)
const MEGATRON = /^ +(?:\[[^\]]*\] )?iteration +(\d+)\/ *(\d+) \|/;
const MEGATRON_FIELD = / ([^:|]+): ([^|]+?) \|/g;

/** The caller has checked that the line starts with a space and holds `iteration `. */
export function parseMegatron(line: string): StepParse {
  const m = MEGATRON.exec(line);
  if (m === null) return null;
  const p: ParsedStep = { step: Number(m[1]), total: Number(m[2]), format: 'megatron' };
  MEGATRON_FIELD.lastIndex = m[0].length - 1;
  for (const f of line.matchAll(MEGATRON_FIELD)) {
    const key = f[1]!;
    const v = num(f[2]!.toLowerCase());
    if (v === undefined || (Number.isNaN(v) && f[2] !== 'nan')) continue;
    if (key === 'elapsed time per iteration (ms)') p.seconds = v / 1000;
    else if (key === 'learning rate') p.lr = v;
    else if (key === 'lm loss' || (p.loss === undefined && key.endsWith('loss') && key !== 'loss scale'))
      p.loss = v;
  }
  return p;
}

// DeepSpeed (deepspeed/runtime/pipe/engine.py train_batch): `steps: {global_steps} loss: {:0.4f}
// [<name>: {:0.4f} ]iter time (s): {:0.3f} samples/sec: {:0.3f}`
const DS_PIPE = new RegExp(
  `^steps: (\\d+) loss: (${FLOAT}) (?:.*?)iter time \\(s\\): (${FLOAT}) samples/sec`,
);
// its engine's progress report through its logger (deepspeed/runtime/engine.py _report_progress):
// `[<date>] [INFO] [logging.py:N:log_dist] [Rank 0] step={N}, skipped={K}, lr=[…], mom=[…]`: no loss
const DS_PROGRESS = new RegExp(`\\[Rank \\d+\\] step=(\\d+), skipped=\\d+, lr=\\[(${FLOAT})`);
// and its throughput timer (deepspeed/utils/timer.py ThroughputTimer.stop):
// `epoch={E}/micro_step={M}/global_step={N}, RunningAvgSamplesPerSec=…, CurrSamplesPerSec=…, …`
const DS_TIMER = /epoch=\d+\/micro_step=\d+\/global_step=(\d+), RunningAvgSamplesPerSec=/;

/** The caller has checked `line.startsWith('steps: ')`. */
export function parseDeepSpeedPipe(line: string): StepParse {
  const m = DS_PIPE.exec(line);
  if (m === null) return line.includes(' loss: ') ? 'malformed' : null;
  return { step: Number(m[1]), loss: num(m[2])!, seconds: Number(m[3]), format: 'deepspeed' };
}

/** DeepSpeed's logger lines that say a step is done (no loss in them); the caller checked `[2…`. */
export function parseDeepSpeedLog(line: string): StepParse {
  const m = DS_PROGRESS.exec(line);
  if (m !== null) return { step: Number(m[1]), lr: num(m[2]), format: 'deepspeed' };
  const t = DS_TIMER.exec(line);
  return t === null ? null : { step: Number(t[1]), format: 'deepspeed' };
}

// litgpt, litgpt/pretrain.py and litgpt/finetune/*.py: `Epoch {e} | iter {iter} step {step} | loss
// train: {:.3f}, val: {val} | iter time: {ms:.2f} ms[ (step)][ remaining time: …]`. The step
// counted is `iter` (a micro-batch): the one it logs by, and the one its iter time is the time of.
const LITGPT = new RegExp(
  `^Epoch \\d+ \\| iter (\\d+) step \\d+ \\| loss train: (${FLOAT}), val: \\S+ \\| iter time: (\\d+(?:\\.\\d+)?) ms`,
);

/** The caller has checked `line.startsWith('Epoch ')` and that it is no tqdm bar. */
export function parseLitGpt(line: string): StepParse {
  const m = LITGPT.exec(line);
  if (m === null) return line.includes(' | loss train: ') ? 'malformed' : null;
  return { step: Number(m[1]), loss: num(m[2])!, seconds: Number(m[3]) / 1000, format: 'litgpt' };
}

// One JSON object per line, as a JSON logger prints a record with the step's numbers in it
// (python-json-logger's JsonFormatter with `extra={"step": …, "loss": …}`, structlog's
// JSONRenderer, fairseq's `--log-format json` keys): the first key of each list that holds a number.
const JSON_STEP = ['step', 'global_step', 'iter', 'iteration', 'num_updates', 'trainer/global_step'];
const JSON_LOSS = ['loss', 'train_loss', 'train/loss', 'lm_loss'];
const JSON_LR = ['lr', 'learning_rate', 'train/lr', 'train/learning_rate'];
const JSON_SECONDS = ['step_time', 'iter_time', 'time_per_step', 'train/step_time'];
const JSON_TOKS = ['tokens_per_sec', 'tokens_per_second', 'toks_per_s', 'tps', 'wps'];

/** a key's number (fairseq prints numbers as strings) */
function field(rec: Record<string, unknown>, keys: string[]): number | undefined {
  for (const k of keys) {
    const v = rec[k];
    if (typeof v === 'number') return v;
    if (typeof v === 'string' && v !== '' && Number.isFinite(Number(v))) return Number(v);
  }
  return undefined;
}

/** The caller has checked `line.startsWith('{"')`. */
export function parseJsonLine(line: string): StepParse {
  if (!line.includes('loss"')) return null;
  let rec: unknown;
  try {
    rec = parsePythonJson(line); // a NaN loss is written `NaN` by Python's json
  } catch {
    return 'malformed';
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) return null;
  const r = rec as Record<string, unknown>;
  const step = field(r, JSON_STEP);
  const loss = field(r, JSON_LOSS);
  if (step === undefined || loss === undefined || !Number.isInteger(step)) return null;
  const p: ParsedStep = { step, loss, format: 'jsonl' };
  const lr = field(r, JSON_LR);
  if (lr !== undefined) p.lr = lr;
  const seconds = field(r, JSON_SECONDS);
  if (seconds !== undefined) p.seconds = seconds;
  const toks = field(r, JSON_TOKS);
  if (toks !== undefined) p.toksPerS = toks;
  return p;
}
