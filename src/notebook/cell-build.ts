/**
 * Turning a run into a cell: the lane snapshot when it starts, the summary when it ends. Pure apart
 * from reading the lane file (for its hash), the trainer's git commit and the run's evidence folder.
 */

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { RunDigest } from '../analysis/run-digest.js';
import { type StepFormatReport, stepFormatText } from '../analysis/step-cadence.js';
import { isPersonFacingFile } from '../ingest/run-files.js';
import type { Lane } from '../lanes/lane.js';
import type { RunSpec } from '../runs/launcher.js';
import { gitInfo } from './git-info.js';
import type { Cell, CellSummary, LaneSnapshot } from './model.js';
import type { NewCell } from './reducer.js';
import { maskArgv, maskEnv, maskText } from './secrets.js';

export function fileHash(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 16);
  } catch {
    return '';
  }
}

export function laneSnapshot(p: Lane): LaneSnapshot {
  return {
    name: p.name,
    description: p.description,
    source: p.source,
    sourceHash: fileHash(p.source),
    env: maskEnv(p.env),
    args: maskArgv(p.args),
    steps: p.steps,
    acceptance: { ...p.acceptance },
    ...(p.target ? { target: { ...p.target } } : {}),
    ...(p.phases?.length ? { phases: p.phases } : {}),
  };
}

/** the lane file changed (or vanished) since the cell ran: its verdict may not hold any more */
export function isStale(cell: Pick<Cell, 'lane'>): boolean {
  return !!cell.lane.source && fileHash(cell.lane.source) !== cell.lane.sourceHash;
}

/** a path as the notebook stores it: relative to the notebook's folder when inside it */
export function notebookPath(notebookDir: string, p: string): string {
  const rel = relative(notebookDir, resolve(p));
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : resolve(p);
}

export function resolveEvidenceDir(notebookDir: string, cell: Pick<Cell, 'evidenceDir'>): string {
  return isAbsolute(cell.evidenceDir) ? cell.evidenceDir : resolve(notebookDir, cell.evidenceDir);
}

export interface StartFacts extends Pick<Cell, 'parent' | 'link' | 'phase'> {
  spec: RunSpec;
  lane: Lane;
  target: string;
  /** the run's evidence on this machine (the run dir, or its mirror for a remote run) */
  localDir: string;
  notebookDir: string;
}

/** a cell for a run that has just started (its trainer's git commit read when it ran here) */
export function startedCell(f: StartFacts): NewCell {
  // only a local working dir can be asked; a remote one would need the box
  const git = f.target === 'local' ? gitInfo(f.spec.cwd) : undefined;
  return {
    ...(f.parent ? { parent: f.parent, link: f.link } : {}),
    ...(f.phase !== undefined ? { phase: f.phase } : {}),
    created: f.spec.createdAt,
    started: f.spec.createdAt,
    target: f.target,
    lane: laneSnapshot(f.lane),
    env: maskEnv(f.spec.env),
    command: maskArgv(f.spec.argv),
    cwd: f.spec.cwd,
    demo: !!f.spec.demo,
    runId: f.spec.runId,
    runDir: f.spec.runDir,
    evidenceDir: notebookPath(f.notebookDir, f.localDir),
    ...(git ? { git } : {}),
    state: 'running',
    evidence: [],
    series: { loss: [], toks: [] },
  };
}

/** The headless outcome: the analysis fields plus GO/NO-GO. Unknown extra fields pass through. */
export interface Outcome {
  verdict: string;
  stepsReached: number;
  go: boolean;
  reasons: string[];
  /** the engine's digest of the run (series, excerpts, platform) */
  digest?: RunDigest;
}

/** the files of a run folder a person would open, for the cell's evidence list */
export function evidenceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => isPersonFacingFile(f) && statSync(join(dir, f)).isFile())
    .sort();
}

/** the header's words for the run's step format (analysis/step-cadence.ts), from the outcome's JSON */
const stepFormatOf = (v: unknown): string | null =>
  obj(v) === null ? null : stepFormatText(v as StepFormatReport);
const n = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const obj = (v: unknown) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : null);

/** the fields a cell adds when its run ended: verdict, summary, evidence, series, excerpts */
export function finishedPatch(
  result: Outcome,
  localDir: string,
  rawEnv: Record<string, string>,
  ended: string,
): Partial<Cell> {
  const outcome = result as Outcome & Record<string, unknown>;
  const digest = outcome.digest ?? EMPTY_DIGEST;
  const mask = (l: string) => maskText(l, rawEnv);
  const x = digest.excerpts;
  const losses = digest.series.loss.map((p) => p[1]).filter(Number.isFinite);
  const stall = obj(outcome.stall);
  const nan = obj(outcome.nan);
  const crash = obj(outcome.crash);
  const crashFrame = obj(crash?.frame);
  const gpus = Array.isArray(outcome.gpus) ? outcome.gpus.map(obj) : [];
  const summary: CellSummary = {
    stepsReached: outcome.stepsReached,
    firstLoss: losses[0] ?? null,
    lastLoss: losses[losses.length - 1] ?? null,
    minLoss: losses.length ? Math.min(...losses) : null,
    medianToksPerS: n(obj(outcome.throughput)?.medianToksPerS),
    medianStepS: n(obj(outcome.throughput)?.medianStepS),
    ...(stepFormatOf(outcome.stepFormat) ? { stepFormat: stepFormatOf(outcome.stepFormat)! } : {}),
    ...(typeof obj(outcome.target)?.reached === 'boolean'
      ? { targetReached: obj(outcome.target)!.reached as boolean }
      : {}),
    peakMemMiB: n(obj(outcome.memory)?.peakReservedMiB),
    stall: stall
      ? {
          step: Number(stall.step),
          rank: Number(stall.rank),
          where: String(stall.where),
          ...(n(stall.silenceS) != null ? { silenceS: n(stall.silenceS)! } : {}),
          ...(n(stall.thresholdS) != null ? { thresholdS: n(stall.thresholdS)! } : {}),
        }
      : null,
    nan: nan ? { step: Number(nan.step), rank: Number(nan.rank) } : null,
    crash: crash
      ? {
          step: Number(crash.step),
          rank: Number(crash.rank),
          exception: String(crash.exception),
          message: String(crash.message ?? '').split('\n')[0] ?? '',
          ...(crashFrame ? { where: `${crashFrame.function} (${crashFrame.file}:${crashFrame.line})` } : {}),
        }
      : null,
    line: typeof outcome.summary === 'string' ? outcome.summary : outcome.verdict,
    exitCode: n(outcome.exitCode),
  };
  const { runDir: _r, localDir: _l, digest: _d, ...analysis } = outcome;
  const gpu = gpus[0];
  return {
    ended,
    state: 'done',
    verdict: outcome.verdict,
    go: outcome.go,
    reasons: outcome.reasons,
    summary,
    evidence: evidenceFiles(localDir),
    series: digest.series,
    excerpts: {
      steps: x.steps.map(mask),
      tail: x.tail.map(mask),
      dumpTop: x.dumpTop,
      ...(x.dumpFile === undefined ? {} : { dumpFile: x.dumpFile }),
      crash: x.crash.map(mask),
      ...(x.causes === undefined ? {} : { causes: x.causes }),
    },
    platform: {
      ...digest.platform,
      // nvidia-smi's name first: env.json's is torch's view and may carry decorations
      ...(typeof gpu?.name === 'string' ? { gpu: gpu.name } : {}),
      ...(n(gpu?.totalMiB) ? { gpuMemMiB: n(gpu?.totalMiB)!, gpuCount: gpus.length } : {}),
    },
    analysis,
  };
}

const EMPTY_DIGEST: RunDigest = {
  series: { loss: [], toks: [] },
  excerpts: { steps: [], tail: [], dumpTop: [], crash: [] },
  platform: {},
};
