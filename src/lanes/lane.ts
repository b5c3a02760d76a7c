/**
 * A lane is a named env + args recipe from the runbooks, with the acceptance criteria
 * that make a run GO or NO-GO and the stop policy that actually stops the trainer (nsa-vibe ignores
 * SIGTERM, so the default policy is .HALT → SIGINT → SIGKILL).
 */
import { type TorchrunLauncher, validateLauncher } from './torchrun.js';

export interface Acceptance {
  /** the run must reach this step (defaults to the lane's steps) */
  steps?: number;
  finiteLoss: boolean;
  noStall: boolean;
  /** peak reserved GPU memory must stay below this */
  vramLimitMiB?: number;
}

/**
 * What a lane expects of a run beyond its acceptance, for the report: a GO below it is flagged
 * (the seed reports' "37 toks/s (target: 50+)"), the GO/NO-GO itself is the acceptance's.
 */
export interface PerformanceTarget {
  /** the median toks/s a run of this lane should reach */
  toksPerS?: number;
}

export interface StopPolicy {
  /** write `.HALT` in the out dir first (the trainer polls it once per step) */
  halt: boolean;
  /** how long to wait for a graceful exit after .HALT */
  haltWaitS: number;
  /** then SIGINT (KeyboardInterrupt), wait this long, then SIGKILL */
  sigintWaitS: number;
}

export interface DetectorSettings {
  /** a stall is a silence longer than k × the phase's recent max interval ... */
  k?: number;
  /** ... and never shorter than this floor */
  floorS?: number;
  /** the first step (warm-up, compilation) may be silent this long before it is suspect (60) */
  firstStepS?: number;
  /** spinning on one frame must last max(2 × threshold, this) before it is called stuck (30) */
  spinConfirmS?: number;
  /** hard ceiling: a CPU-busy native call silent longer than this is a hang (1800, NCCL's order) */
  maxStepS?: number;
}

export interface Lane {
  name: string;
  description: string;
  env: Record<string, string>;
  /** extra env applied only when the bundled demo trainer runs (its knobs have other names) */
  demoEnv: Record<string, string>;
  args: string[];
  steps?: number;
  /** the trainer command when `run` is given none after `--` */
  command?: string[];
  /**
   * how the step count is passed: `--steps` appends `--steps N`, a flag ending in `=` one argument
   * (`--max_iters=N`), "" nothing. Unset: the known trainer's (src/lanes/trainers.ts), else --steps
   */
  stepsFlag?: string;
  /** the trainer's own out_dir, relative to its cwd (where its heartbeats and dumps go) */
  outDir?: string;
  /** the signal of nsa-dbg's stack hook in the ranks (12, SIGUSR2, unless set); 0: no hook */
  stackSignal?: number;
  /** regex with named groups step/loss[/toks/lr] for trainers with other log formats */
  stepRegex?: string;
  acceptance: Acceptance;
  /** expected performance (report only) */
  target?: PerformanceTarget;
  stop: StopPolicy;
  detector: DetectorSettings;
  /**
   * smoke ladder: run these step counts in turn, each as its own notebook cell, the next only when
   * the previous passed its acceptance (e.g. [{steps: 1}, {steps: 200}])
   */
  phases?: Array<{ steps: number }>;
  /** where the lane came from, for error messages and `lanes` */
  source: string;
  /** launch through torchrun (torchrun.ts); absent: the command runs directly */
  launcher?: TorchrunLauncher;
}

export const DEFAULT_STOP: StopPolicy = { halt: true, haltWaitS: 15, sigintWaitS: 10 };

/** The real nsa-vibe trainer, run from the repo root (PYTHONPATH=. is required: reference §0.3 #2). */
export const DEFAULT_COMMAND = [
  'python3',
  '-u',
  'scripts/train_showcase.py',
  '--dataset',
  'synthetic',
  '--ddp',
  '0',
];

export class LaneError extends Error {
  constructor(
    readonly file: string,
    readonly field: string,
    readonly detail: string,
    /** where in the file (1-based), when it is known */
    readonly at?: { line: number; col: number },
  ) {
    super(`${file}${at ? `:${at.line}:${at.col}` : ''}: field "${field}": ${detail}`);
    this.name = 'LaneError';
  }
}

/** each detector setting and the least value it takes, in a lane file and in `bisect --detector` */
export const DETECTOR_MIN: Record<keyof DetectorSettings, number> = {
  k: 1,
  floorS: 0.1,
  firstStepS: 0.1,
  spinConfirmS: 0,
  maxStepS: 1,
};

function detectorSettings(file: string, det: Record<string, unknown>): DetectorSettings {
  const keys = Object.keys(DETECTOR_MIN);
  for (const k of Object.keys(det))
    if (!keys.includes(k))
      throw new LaneError(file, `detector.${k}`, `is not a known field (${keys.join(', ')})`);
  const set = Object.entries(DETECTOR_MIN).map(([k, min]) => [k, num(file, `detector.${k}`, det[k], min)]);
  return Object.fromEntries(set.filter(([, v]) => v !== undefined));
}

/** The lane's detector settings as the evidence engine takes them. */
export function evidenceOptionsOf(d: DetectorSettings) {
  return {
    detector: { k: d.k, floorS: d.floorS, firstStepAllowanceS: d.firstStepS },
    judge: { spinConfirmS: d.spinConfirmS, maxStepS: d.maxStepS },
  };
}

const NAME = /^[a-z0-9][a-z0-9._-]*$/;
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KNOWN_KEYS = new Set([
  'name',
  'description',
  'env',
  'demoEnv',
  'args',
  'steps',
  'command',
  'stepsFlag',
  'outDir',
  'stackSignal',
  'stepRegex',
  'acceptance',
  'stop',
  'detector',
  'phases',
  'launcher',
  'target',
]);

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function envMap(file: string, field: string, v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) throw new LaneError(file, field, 'must be a mapping of NAME: value');
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (!ENV_KEY.test(k))
      throw new LaneError(file, `${field}.${k}`, 'is not a valid environment variable name');
    if (typeof val !== 'string' && typeof val !== 'number' && typeof val !== 'boolean')
      throw new LaneError(file, `${field}.${k}`, 'must be a string or number');
    out[k] = String(val);
  }
  return out;
}

export function stringList(file: string, field: string, v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' && typeof x !== 'number'))
    throw new LaneError(file, field, 'must be a list of strings');
  return v.map(String);
}

function num(file: string, field: string, v: unknown, min = 0): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min)
    throw new LaneError(file, field, `must be a number ≥ ${min}`);
  return v;
}

function bool(file: string, field: string, v: unknown, dflt: boolean): boolean {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean') throw new LaneError(file, field, 'must be true or false');
  return v;
}

function section(file: string, field: string, v: unknown): Obj {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) throw new LaneError(file, field, 'must be a mapping');
  return v;
}

function targetOf(file: string, v: unknown): PerformanceTarget | undefined {
  if (v === undefined || v === null) return undefined;
  const t = section(file, 'target', v);
  for (const k of Object.keys(t))
    if (k !== 'toksPerS') throw new LaneError(file, `target.${k}`, 'is not a known field (toksPerS)');
  const toksPerS = num(file, 'target.toksPerS', t.toksPerS);
  return toksPerS === undefined ? undefined : { toksPerS };
}

function phaseList(file: string, v: unknown): Array<{ steps: number }> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.length === 0)
    throw new LaneError(file, 'phases', 'must be a list like [{steps: 1}, {steps: 200}]');
  return v.map((p, i) => {
    if (!isObj(p)) throw new LaneError(file, `phases[${i}]`, 'must be a mapping with steps');
    for (const k of Object.keys(p))
      if (k !== 'steps') throw new LaneError(file, `phases[${i}].${k}`, 'is not a known field');
    const steps = num(file, `phases[${i}].steps`, p.steps, 1);
    if (steps === undefined) throw new LaneError(file, `phases[${i}].steps`, 'is required');
    return { steps };
  });
}

/**
 * `stackSignal:` USR2 / SIGUSR2 (the default), a real-time signal number (34–64), or off. SIGUSR1
 * stays the trainer's own; the others would stop or kill a process that does not catch them.
 */
function stackSignalOf(file: string, v: unknown): number {
  if (v === false || v === 'off') return 0;
  if (v === 'USR2' || v === 'SIGUSR2' || v === 12) return 12;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 34 && v <= 64) return v;
  throw new LaneError(file, 'stackSignal', 'must be USR2, a real-time signal number (34-64), or off');
}

/** Validate one parsed YAML document. Every error names the file and the field. */
export function validateLane(doc: unknown, file: string): Lane {
  if (!isObj(doc)) throw new LaneError(file, '(root)', 'must be a mapping with at least `name`');
  for (const k of Object.keys(doc))
    if (!KNOWN_KEYS.has(k)) throw new LaneError(file, k, 'is not a known field');
  const name = doc.name;
  if (typeof name !== 'string' || !NAME.test(name))
    throw new LaneError(file, 'name', 'must be lower-case letters, digits, ".", "_" or "-"');
  if (doc.description !== undefined && typeof doc.description !== 'string')
    throw new LaneError(file, 'description', 'must be a string');
  const steps = num(file, 'steps', doc.steps, 1);
  const acc = section(file, 'acceptance', doc.acceptance);
  const stop = section(file, 'stop', doc.stop);
  const det = section(file, 'detector', doc.detector);
  const stepRegex = doc.stepRegex;
  if (stepRegex !== undefined) {
    if (typeof stepRegex !== 'string') throw new LaneError(file, 'stepRegex', 'must be a string');
    try {
      new RegExp(stepRegex);
    } catch (e) {
      throw new LaneError(file, 'stepRegex', `is not a valid regular expression: ${(e as Error).message}`);
    }
    if (!/\(\?<step>/.test(stepRegex) || !/\(\?<loss>/.test(stepRegex))
      throw new LaneError(file, 'stepRegex', 'needs named groups (?<step>...) and (?<loss>...)');
  }
  if (doc.stepsFlag !== undefined && (typeof doc.stepsFlag !== 'string' || /\s/.test(doc.stepsFlag)))
    throw new LaneError(file, 'stepsFlag', 'must be a flag such as --steps or --max_iters= (or "" for none)');
  if (doc.outDir !== undefined && (typeof doc.outDir !== 'string' || doc.outDir.trim() === ''))
    throw new LaneError(file, 'outDir', "must be a path (the trainer's out_dir, relative to its cwd)");
  const command = stringList(file, 'command', doc.command);
  const phases = phaseList(file, doc.phases);
  if (command && command.length === 0) throw new LaneError(file, 'command', 'must not be empty');
  const launcher = validateLauncher(file, doc.launcher);
  const target = targetOf(file, doc.target);
  return {
    name,
    description: typeof doc.description === 'string' ? doc.description.trim() : '',
    env: envMap(file, 'env', doc.env),
    demoEnv: envMap(file, 'demoEnv', doc.demoEnv),
    args: stringList(file, 'args', doc.args) ?? [],
    ...(launcher === undefined ? {} : { launcher }),
    steps,
    command,
    ...(typeof doc.stepsFlag === 'string' ? { stepsFlag: doc.stepsFlag } : {}),
    ...(typeof doc.outDir === 'string' ? { outDir: doc.outDir } : {}),
    ...(doc.stackSignal === undefined ? {} : { stackSignal: stackSignalOf(file, doc.stackSignal) }),
    stepRegex: stepRegex as string | undefined,
    acceptance: {
      steps: num(file, 'acceptance.steps', acc.steps, 1),
      finiteLoss: bool(file, 'acceptance.finiteLoss', acc.finiteLoss, true),
      noStall: bool(file, 'acceptance.noStall', acc.noStall, true),
      vramLimitMiB: num(file, 'acceptance.vramLimitMiB', acc.vramLimitMiB, 1),
    },
    stop: {
      halt: bool(file, 'stop.halt', stop.halt, DEFAULT_STOP.halt),
      haltWaitS: num(file, 'stop.haltWaitS', stop.haltWaitS) ?? DEFAULT_STOP.haltWaitS,
      sigintWaitS: num(file, 'stop.sigintWaitS', stop.sigintWaitS) ?? DEFAULT_STOP.sigintWaitS,
    },
    detector: detectorSettings(file, det),
    ...(target ? { target } : {}),
    ...(phases ? { phases } : {}),
    source: file,
  };
}
