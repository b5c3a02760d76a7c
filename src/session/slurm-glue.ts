/**
 * What changes in a session when the run spans nodes: stdout.log carries a label per agent (srun's
 * task labels for a Slurm job, the host's index for `--hosts`), the ranks' processes are reached on
 * their nodes (through `srun --overlap`, or the host's SSH connection), and a Slurm job's state goes
 * into the header.
 */
import { isHostsTarget } from '../hosts/hosts-target.js';
import type { RunController } from '../runs/run-controller.js';
import { SrunTarget } from '../slurm/srun-target.js';
import type { Target } from '../targets/target.js';
import type { LiveModel } from './live-model.js';
import type { JobView } from './state.js';

/** a node list that names one node (`gpu7`, not `gpu[7-8]` or `a,b`) */
const singleNode = (nodes: string | null | undefined) => (nodes && !/[[,]/.test(nodes) ? nodes : null);

/** the target the run's checks use: the session's, or for a Slurm job one that reaches its nodes */
export function checksTarget(base: Target, run: RunController, model: LiveModel): Target {
  const nodeOfPid = (pid: number) => {
    let rank: number | undefined;
    for (const [r, p] of model.rankPids) if (p === pid) rank = r;
    return model.evidence.nodes.nodeOfPid(pid, rank);
  };
  if (run.spec.launcher?.hosts && isHostsTarget(base)) return base.routed(nodeOfPid);
  if (!run.spec.launcher?.slurm) return base;
  return new SrunTarget(
    base,
    () => run.job?.jobId ?? null,
    (pid) => nodeOfPid(pid) ?? singleNode(run.job?.state?.nodes),
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

/** what `K` would do, for its confirm; null when the run is not a Slurm job */
export function cancelJobText(run: RunController | null): string | null {
  const job = run?.job;
  if (!job) return null;
  const s = job.state;
  return `scancel job ${job.jobId} (${s?.state ?? 'submitted'}${s?.nodes ? ` on ${s.nodes}` : ''}): Slurm signals every rank and frees the nodes. Evidence stays in ${run.spec.runDir}`;
}

/** `K` confirmed: scancel the job (the run ends when the job does) */
export async function cancelJob(run: RunController | null): Promise<{ message: string; cancelled: boolean }> {
  const job = run?.job;
  if (!job) return { message: 'not a Slurm run: no job to cancel', cancelled: false };
  if (job.ended)
    return { message: `job ${job.jobId} has already ended (${job.state?.state})`, cancelled: false };
  await job.cancel();
  void job.poll();
  return { message: `scancel ${job.jobId}: the job is being cancelled`, cancelled: true };
}
