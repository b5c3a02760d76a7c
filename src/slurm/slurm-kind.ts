/**
 * The launch kind `slurm`: the run is a batch job (src/slurm/slurm-run.ts), one torchrun agent per
 * node. Its state comes from the scheduler (the header's `job 41 RUNNING on gpu[01-02]`), a worker's
 * /proc facts and signals go through `srun --overlap` on its node, a stop through scancel, and `K`
 * cancels the job. It outlives nsa-dbg: quitting leaves it, `attach` picks it up from its job id.
 */
import { LAUNCH_FILE, readExitCode } from '../ingest/launcher-files.js';
import { agentsLayout } from '../ingest/run-files.js';
import type { ActiveLaunch, LaunchContext, LaunchKind } from '../runs/launch-kind.js';
import { attachCommand, requireTorchrun, WORKER_FAILURE_GRACE_MS } from '../runs/launch-kind.js';
import type { SlurmLaunch } from '../runs/launch-spec.js';
import { followOutput } from '../runs/process-launch.js';
import { type JobState, jobEnded, jobState, readJobId } from './job.js';
import { exitCodeOfJob, SlurmJob, submitSlurmRun } from './slurm-run.js';
import { SrunTarget } from './srun-target.js';

/** after a job ends, how long the batch script's own exit_code may take to reach the followers */
const EXIT_CODE_GRACE_MS = 5000;

/** a node list that names one node (`gpu7`, not `gpu[7-8]` or `a,b`) */
const singleNode = (nodes: string | null | undefined) => (nodes && !/[[,]/.test(nodes) ? nodes : null);

/** `job 41 PENDING (Resources)`, `job 41 RUNNING on gpu[01-02]` (SUBMITTED until Slurm answers) */
export function jobLine(jobId: string, s: JobState | null): string {
  const state = s?.state ?? 'SUBMITTED';
  const why = s?.reason && state !== 'RUNNING' ? ` (${s.reason})` : '';
  return `job ${jobId} ${state}${why}${s?.nodes ? ` on ${s.nodes}` : ''}`;
}

function active(ctx: LaunchContext<SlurmLaunch>, jobId: string | null): ActiveLaunch {
  const { target, spec, events } = ctx;
  let ending = false;
  /** the job ended: its batch script's exit_code, or (scancel, TIMEOUT, NODE_FAIL) the job's own */
  const endFromJob = async (s: JobState) => {
    if (ending) return;
    ending = true;
    const deadline = Date.now() + EXIT_CODE_GRACE_MS;
    while (!ctx.exited() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (!ctx.exited()) events.ended(exitCodeOfJob(s));
  };
  const job =
    jobId === null
      ? null
      : new SlurmJob(target, jobId, (s) => {
          events.changed();
          // a Slurm run has no pid file: it runs once the job does
          if (s.state === 'RUNNING') events.running();
          if (jobEnded(s.state)) void endFromJob(s);
        });
  job?.start();
  return {
    terminal: (size) => followOutput(target, spec.runDir, size),
    stoppable: async () => job?.stoppable() ?? null,
    requestDump: async () => ({
      message: 'a Slurm job: its ranks are asked one by one once their heartbeats name their pids',
      sent: false,
    }),
    checksTarget: (nodeOfPid) =>
      new SrunTarget(
        target,
        () => job?.jobId ?? null,
        (pid) => nodeOfPid(pid) ?? singleNode(job?.state?.nodes),
      ),
    line: () => (job ? jobLine(job.jobId, job.state) : null),
    quitWords: (q) =>
      `Slurm job ${job?.jobId ?? '(not submitted)'} keeps running (K cancels it); re-attach with: ${attachCommand(q.targetLabel, spec.runId)}`,
    ...(job
      ? {
          cancellable: {
            cancelText: () => {
              const s = job.state;
              return `scancel job ${job.jobId} (${s?.state ?? 'submitted'}${s?.nodes ? ` on ${s.nodes}` : ''}): Slurm signals every rank and frees the nodes. Evidence stays in ${spec.runDir}`;
            },
            cancel: async () => {
              if (job.ended)
                return {
                  message: `job ${job.jobId} has already ended (${job.state?.state})`,
                  cancelled: false,
                };
              await job.cancel();
              void job.poll();
              return { message: `scancel ${job.jobId}: the job is being cancelled`, cancelled: true };
            },
          },
        }
      : {}),
    dispose: () => job?.stop(),
  };
}

export const slurmKind: LaunchKind<SlurmLaunch> = {
  place(launch, label) {
    // the rendezvous port changes nothing about how a run goes
    const { kind: _k, rdzvPort: _p, ...key } = launch;
    return { label: `slurm:${label}`, key };
  },
  plan(spec) {
    requireTorchrun(spec, '--slurm');
    return { ...spec, layout: { ...spec.layout, ...agentsLayout(spec.torchrun?.nprocPerNode ?? 1) } };
  },
  async start(ctx) {
    const { kind: _k, ...settings } = ctx.spec.launcher;
    const jobId = await submitSlurmRun(ctx.target, ctx.spec, settings);
    await ctx.target.writeFile(
      `${ctx.spec.runDir}/${LAUNCH_FILE}`,
      `${JSON.stringify({ mode: 'slurm', jobId })}\n`,
    );
    return active(ctx, jobId);
  },
  attach: async (ctx) => active(ctx, await readJobId(ctx.target, ctx.spec.runDir)),
  follower: (_target, _spec, plain) => plain,
  acrossNodes: { failureGraceMs: WORKER_FAILURE_GRACE_MS },
  leavesRunningOnQuit: () => true,
  gpuTarget: (target) => target,
  reconnect: async (base) => base,
  async status(target, runDir) {
    const exitCode = await readExitCode((p) => target.readFile(p), runDir);
    if (exitCode !== null) return { status: 'exited', exitCode };
    const jobId = await readJobId(target, runDir).catch(() => null);
    if (jobId === null) return { status: 'starting' };
    // a Slurm run has no pid of its own: the job says whether it waits, runs or ended
    const s = await jobState(target, jobId).catch(() => null);
    const job = {
      id: jobId,
      state: s?.state ?? 'UNKNOWN',
      reason: s?.reason ?? null,
      nodes: s?.nodes ?? null,
    };
    const note = `job ${job.id} ${job.state}${job.reason && job.state === 'PENDING' ? ` (${job.reason})` : ''}`;
    if (s === null) return { status: 'lost', note, extra: { job } };
    if (jobEnded(s.state)) {
      const code = exitCodeOfJob(s);
      return { status: 'exited', ...(code === null ? {} : { exitCode: code }), note, extra: { job } };
    }
    return { status: s.state === 'PENDING' ? 'pending' : 'running', note, extra: { job } };
  },
};
