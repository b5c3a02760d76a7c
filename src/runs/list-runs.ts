import { jobEnded, jobState, readJobId } from '../slurm/job.js';
import { exitCodeOfJob } from '../slurm/slurm-run.js';
import type { Target } from '../targets/target.js';
import type { RunSpec } from './launcher.js';

export interface RunListing {
  runId: string;
  runDir: string;
  lane: string;
  createdAt: string;
  command: string;
  /** `pending`: a Slurm job waiting for its nodes */
  status: 'running' | 'exited' | 'lost' | 'starting' | 'pending';
  exitCode?: number;
  pid?: number;
  /** a Slurm run: its job and the job's state as squeue/scontrol/sacct give it */
  job?: { id: string; state: string; reason: string | null; nodes: string | null };
}

/** The runs under a runs root on a target, newest first, with whether each is still alive. */
export async function listRuns(target: Target, runsRoot: string): Promise<RunListing[]> {
  const ids = (await target.listDir(runsRoot)).sort().reverse();
  const out: RunListing[] = [];
  for (const runId of ids) {
    const runDir = `${runsRoot}/${runId}`;
    const cmd = await target.readFile(`${runDir}/command.json`).catch(() => null);
    if (!cmd) continue;
    let spec: RunSpec;
    try {
      spec = JSON.parse(cmd.toString('utf8')) as RunSpec;
    } catch {
      continue;
    }
    const pidText = (await target.readFile(`${runDir}/pid`).catch(() => null))?.toString('utf8').trim();
    const exitText = (await target.readFile(`${runDir}/exit_code`).catch(() => null))
      ?.toString('utf8')
      .trim();
    const pid = pidText ? Number(pidText) : undefined;
    let status: RunListing['status'];
    let exitCode = exitText ? Number(exitText) : undefined;
    let job: RunListing['job'];
    const jobId = spec.launcher?.slurm ? await readJobId(target, runDir) : null;
    if (exitText !== undefined && exitText !== '') status = 'exited';
    else if (jobId !== null) {
      // a Slurm run has no pid of its own: the job says whether it waits, runs or ended
      const s = await jobState(target, jobId).catch(() => null);
      job = { id: jobId, state: s?.state ?? 'UNKNOWN', reason: s?.reason ?? null, nodes: s?.nodes ?? null };
      if (s === null) status = 'lost';
      else if (jobEnded(s.state)) {
        status = 'exited';
        exitCode ??= exitCodeOfJob(s) ?? undefined;
      } else status = s.state === 'PENDING' ? 'pending' : 'running';
    } else if (pid === undefined) status = 'starting';
    else status = (await target.isAlive(pid)) ? 'running' : 'lost';
    out.push({
      runId,
      runDir,
      lane: spec.lane,
      createdAt: spec.createdAt,
      command: spec.argv.join(' '),
      status,
      ...(exitCode !== undefined ? { exitCode } : {}),
      ...(pid !== undefined ? { pid } : {}),
      ...(job ? { job } : {}),
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
