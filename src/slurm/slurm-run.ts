/**
 * One run as a Slurm job: writes the batch script and the per-node agent script into the run dir,
 * submits them, and follows the job's state (PENDING with its reason, RUNNING on which nodes, how
 * it ended). The job outlives nsa-dbg: quitting never cancels it; `attach` picks it up again from
 * the job id in the run dir. A stop goes through scancel: SIGINT to the job's steps (the torchrun
 * agents, which pass it on to their workers), then scancel itself (SIGTERM, SIGKILL after Slurm's
 * KillWait).
 */

import { NODE_SCRIPT, nodeScript } from '../runs/agent-script.js';
import type { RunSpec } from '../runs/launcher.js';
import type { StoppableRun } from '../runs/stop.js';
import type { Target } from '../targets/target.js';
import { debugLog } from '../util/debug-log.js';
import { cancelJob, type JobState, jobEnded, jobState, submitJob } from './job.js';
import { SBATCH_FILE, SLURM_PLACE, type SlurmSettings, sbatchScript } from './sbatch.js';

/** how often the job's state is read: squeue is a call to the controller, so not too often */
const POLL_MS = 2000;

export async function submitSlurmRun(target: Target, spec: RunSpec, s: SlurmSettings): Promise<string> {
  await target.writeFile(
    `${spec.runDir}/${NODE_SCRIPT}`,
    nodeScript(spec, SLURM_PLACE, `started by srun from ${SBATCH_FILE}`),
  );
  await target.writeFile(`${spec.runDir}/${SBATCH_FILE}`, sbatchScript(spec, s));
  return submitJob(target, spec.runDir, s.sbatchArgs);
}

/** the batch script's exit status as a run's exit code (a job ended by a signal: 128 + N) */
export function exitCodeOfJob(j: JobState): number | null {
  if (j.signal !== null && j.signal > 0) return 128 + j.signal;
  return j.exitCode;
}

export class SlurmJob {
  private timer: NodeJS.Timeout | null = null;
  private _state: JobState | null = null;
  private polling = false;

  constructor(
    private readonly target: Target,
    readonly jobId: string,
    private readonly onState: (s: JobState) => void,
  ) {}

  get state(): JobState | null {
    return this._state;
  }

  get ended(): boolean {
    return this._state !== null && jobEnded(this._state.state);
  }

  start(): void {
    if (this.timer) return;
    void this.poll();
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** read the state now (a stop asks between its steps) */
  async poll(): Promise<JobState | null> {
    if (this.polling) return this._state;
    this.polling = true;
    try {
      const s = await jobState(this.target, this.jobId).catch((e: unknown) => {
        debugLog(`job ${this.jobId}: state unreadable: ${(e as Error).message}`);
        return null;
      });
      if (s === null) return this._state;
      const changed =
        this._state === null ||
        this._state.state !== s.state ||
        this._state.reason !== s.reason ||
        this._state.nodes !== s.nodes ||
        this._state.exitCode !== s.exitCode;
      this._state = s;
      if (changed) this.onState(s);
      if (jobEnded(s.state)) this.stop();
      return s;
    } finally {
      this.polling = false;
    }
  }

  /** what the stop ladder acts on */
  stoppable(): StoppableRun {
    return {
      isAlive: async () => {
        const s = await this.poll();
        return s === null || !jobEnded(s.state);
      },
      interrupt: () => cancelJob(this.target, this.jobId, 'INT').catch(() => undefined),
      kill: () => cancelJob(this.target, this.jobId).catch(() => undefined),
    };
  }

  /** `K`: scancel the job (the user confirmed) */
  cancel(): Promise<void> {
    return cancelJob(this.target, this.jobId);
  }
}
