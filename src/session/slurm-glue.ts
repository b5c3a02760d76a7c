/**
 * What changes in a session when the run is a Slurm job: stdout.log carries srun's task labels, the
 * ranks' processes are reached on their compute nodes through `srun --overlap`, and the job's state
 * goes into the header.
 */
import type { Preset } from '../presets/preset.js';
import type { SpecOptions } from '../runs/build-spec.js';
import type { RunSpec } from '../runs/launcher.js';
import type { RunController } from '../runs/run-controller.js';
import { SrunTarget } from '../slurm/srun-target.js';
import type { Target } from '../targets/target.js';
import type { LiveModel } from './live-model.js';
import type { JobView } from './state.js';

/** LiveModel options of a run about to start (spec not built yet) or attached (spec read back) */
export function slurmModelOptions(
  from: { spec: RunSpec } | { options: Omit<SpecOptions, 'preset'>; preset: Preset },
): { srun?: boolean; nprocPerNode?: number } {
  if ('spec' in from) {
    const l = from.spec.launcher;
    return l?.slurm ? { srun: true, nprocPerNode: l.nprocPerNode } : {};
  }
  const { options, preset } = from;
  if (!options.slurm || !preset.launcher) return {};
  return { srun: true, nprocPerNode: options.nprocPerNode ?? preset.launcher.nprocPerNode };
}

/** a node list that names one node (`gpu7`, not `gpu[7-8]` or `a,b`) */
const singleNode = (nodes: string | null | undefined) => (nodes && !/[[,]/.test(nodes) ? nodes : null);

/** the target the run's checks use: the session's, or for a Slurm job one that reaches its nodes */
export function checksTarget(base: Target, run: RunController, model: LiveModel): Target {
  if (!run.spec.launcher?.slurm) return base;
  return new SrunTarget(
    base,
    () => run.job?.jobId ?? null,
    (pid) => {
      let rank: number | undefined;
      for (const [r, p] of model.rankPids) if (p === pid) rank = r;
      return model.evidence.nodes.nodeOfPid(pid, rank) ?? singleNode(run.job?.state?.nodes);
    },
  );
}

/** the header's view of the job */
export function jobView(run: RunController | null): JobView | null {
  const job = run?.job;
  if (!job) return null;
  const s = job.state;
  return {
    id: job.jobId,
    state: s?.state ?? 'SUBMITTED',
    reason: s?.reason ?? null,
    nodes: s?.nodes ?? null,
  };
}
