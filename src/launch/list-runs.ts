import type { RunStatus } from '../runs/launch-kind.js';
import type { LaunchKindName } from '../runs/launch-spec.js';
import { readRunSpec } from '../runs/spec-file.js';
import type { Target } from '../targets/target.js';
import { kindOf } from './kinds.js';

/** a run in `attach`'s listing: its spec's facts, and its state with the kind's more fields beside them */
export type RunListing = Omit<RunStatus, 'extra'> & {
  runId: string;
  runDir: string;
  lane: string;
  createdAt: string;
  command: string;
  /** how it was launched: pty, detached, slurm, hosts */
  launcher: LaunchKindName;
};

/** The runs under a runs root on a target, newest first, each with its state as its kind tells it. */
export async function listRuns(target: Target, runsRoot: string): Promise<RunListing[]> {
  const ids = (await target.listDir(runsRoot)).sort().reverse();
  const out: RunListing[] = [];
  for (const runId of ids) {
    const runDir = `${runsRoot}/${runId}`;
    const spec = await readRunSpec(target, runDir).catch(() => null);
    if (spec === null) continue;
    const { extra, ...state } = await kindOf(spec.launcher).status(target, runDir, spec);
    out.push({
      runId,
      runDir,
      lane: spec.lane,
      createdAt: spec.createdAt,
      command: spec.argv.join(' '),
      launcher: spec.launcher.kind,
      ...state,
      ...extra,
    });
  }
  return out;
}

/** RUN may be a full id or any unambiguous part of one */
export function pickRun(runs: RunListing[], wanted: string): RunListing {
  const exact = runs.find((r) => r.runId === wanted);
  if (exact) return exact;
  const hits = runs.filter((r) => r.runId.includes(wanted));
  if (hits.length === 1) return hits[0]!;
  if (!hits.length) throw new Error(`no run matches "${wanted}"`);
  throw new Error(`"${wanted}" matches ${hits.length} runs: ${hits.map((r) => r.runId).join(', ')}`);
}
