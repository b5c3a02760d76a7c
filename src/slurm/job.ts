/**
 * A Slurm job as nsa-dbg sees it: submitted with `sbatch --parsable`, its state read from `squeue`
 * while the controller lists it, then from `scontrol show job` (finished jobs stay there for
 * MinJobAge), then from `sacct` (clusters with accounting). Every command runs on the target: this
 * machine, or a login node reached over SSH.
 */
import type { Target } from '../targets/target.js';
import { JOB_ID_FILE, SBATCH_FILE } from './sbatch.js';

export interface JobState {
  jobId: string;
  /** as Slurm names it: PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT, … */
  state: string;
  /** why it waits (PENDING) or why it ended, as Slurm says it; null for `None` */
  reason: string | null;
  /** the nodes it runs on (`node[01-02]`), null while it has none */
  nodes: string | null;
  /** `ExitCode=a:b`: the batch script's status and the signal that ended it, once it has ended */
  exitCode: number | null;
  signal: number | null;
  /** where the state came from */
  source: 'squeue' | 'scontrol' | 'sacct';
}

const ENDED = new Set([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'NODE_FAIL',
  'OUT_OF_MEMORY',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
]);

export const jobEnded = (s: string) => ENDED.has(s.split(' ')[0]!);

export class SlurmMissingError extends Error {
  constructor(tool: string, where: string) {
    super(
      `${tool} not found on ${where}: --slurm needs the Slurm client commands (sbatch, squeue, scontrol, scancel, srun) there (Debian/Ubuntu: apt-get install -y slurm-client; a login node of the cluster has them)`,
    );
  }
}

const noneToNull = (v: string | undefined) =>
  v === undefined || v === '' || v === 'None' || v === '(null)' ? null : v;

function exitPair(v: string | undefined): [number | null, number | null] {
  const m = /^(\d+):(\d+)$/.exec(v ?? '');
  return m ? [Number(m[1]), Number(m[2])] : [null, null];
}

/** a job's state from what one of the tools printed; its exit status only once it has ended */
function stateOf(
  source: JobState['source'],
  jobId: string,
  f: { state: string; reason?: string; nodes?: string; exit?: string },
): JobState {
  const [exitCode, signal] = exitPair(f.exit);
  const ended = jobEnded(f.state);
  return {
    jobId,
    state: f.state,
    reason: noneToNull(f.reason),
    nodes: noneToNull(f.nodes),
    exitCode: ended ? exitCode : null,
    signal: ended ? signal : null,
    source,
  };
}

/** the job's row (`|`-separated, with a state) in squeue's or sacct's output */
const rowOf = (out: string, jobId: string) =>
  out
    .split('\n')
    .map((l) => l.trim().split('|'))
    .find(([id, state]) => id === jobId && !!state) ?? [];

/** `squeue -h -j J -o '%i|%T|%r|%N'` → state, or null when the job is not (or no longer) listed */
export function parseSqueue(out: string, jobId: string): JobState | null {
  const [, state, reason, nodes] = rowOf(out, jobId);
  return state ? stateOf('squeue', jobId, { state, reason, nodes }) : null;
}

/** `scontrol show job -o J` (one line of Key=Value) → state, or null when unknown to it */
export function parseScontrol(out: string, jobId: string): JobState | null {
  const own = new RegExp(`(?:^|\\s)JobId=${jobId}(?:\\s|$)`);
  const line = out.split('\n').find((l) => own.test(l));
  if (line === undefined) return null;
  const field = (k: string) => new RegExp(`(?:^|\\s)${k}=(\\S*)`).exec(line)?.[1];
  const state = field('JobState');
  if (!state) return null;
  return stateOf('scontrol', jobId, {
    state,
    reason: field('Reason'),
    nodes: field('NodeList'),
    exit: field('ExitCode'),
  });
}

/** `sacct -n -P -X -j J -o JobID,State,ExitCode,NodeList,Reason` → state, or null */
export function parseSacct(out: string, jobId: string): JobState | null {
  const [, state, exit, nodes, reason] = rowOf(out, jobId);
  if (!state) return null;
  return stateOf('sacct', jobId, {
    // sacct says `CANCELLED by 0`: the state is the first word
    state: state.split(' ')[0]!,
    reason,
    exit,
    nodes: nodes === 'None assigned' ? undefined : nodes,
  });
}

/** `sbatch --parsable` prints `123` or `123;cluster` */
export function parseSbatchParsable(out: string): string | null {
  const m = /^(\d+)(?:;\S+)?\s*$/m.exec(out.trim());
  return m ? m[1]! : null;
}

async function need(target: Target, tool: string): Promise<void> {
  const r = await target.exec(['sh', '-c', `command -v ${tool}`], { timeoutMs: 10_000 });
  if (r.code !== 0) throw new SlurmMissingError(tool, target.label);
}

/** submit the run dir's batch script; the job id is written next to it (for `attach`) */
export async function submitJob(target: Target, runDir: string, sbatchArgs: string[]): Promise<string> {
  await need(target, 'sbatch');
  const r = await target.exec(['sbatch', '--parsable', ...sbatchArgs, `${runDir}/${SBATCH_FILE}`], {
    timeoutMs: 60_000,
  });
  const id = r.code === 0 ? parseSbatchParsable(r.stdout) : null;
  if (id === null)
    throw new Error(`sbatch refused the job: ${(r.stderr || r.stdout).trim() || `exit ${r.code}`}`);
  await target.writeFile(`${runDir}/${JOB_ID_FILE}`, `${id}\n`);
  return id;
}

export async function readJobId(target: Target, runDir: string): Promise<string | null> {
  const b = await target.readFile(`${runDir}/${JOB_ID_FILE}`);
  const id = b?.toString('utf8').trim();
  return id && /^\d+$/.test(id) ? id : null;
}

/** the job's state now, from whichever of squeue, scontrol, sacct knows it; null if none does */
export async function jobState(target: Target, jobId: string): Promise<JobState | null> {
  const q = await target.exec(['squeue', '-h', '-j', jobId, '-o', '%i|%T|%r|%N'], { timeoutMs: 30_000 });
  const listed = q.code === 0 ? parseSqueue(q.stdout, jobId) : null;
  // a job that just ended is listed as COMPLETING or vanishes: scontrol has its exit code
  if (listed !== null && !jobEnded(listed.state)) return listed;
  const c = await target.exec(['scontrol', 'show', 'job', '-o', jobId], { timeoutMs: 30_000 });
  const shown = c.code === 0 ? parseScontrol(c.stdout, jobId) : null;
  if (shown !== null) return shown;
  const a = await target.exec(
    ['sacct', '-n', '-P', '-X', '-j', jobId, '-o', 'JobID,State,ExitCode,NodeList,Reason'],
    { timeoutMs: 30_000 },
  );
  return (a.code === 0 ? parseSacct(a.stdout, jobId) : null) ?? listed;
}

/**
 * scancel the job; with a signal, to its steps only (the torchrun agents): `--full` would also
 * signal the batch shell and its children, among them the srun client, which takes a single SIGINT
 * as "print the status" and passes nothing on
 */
export async function cancelJob(
  target: Target,
  jobId: string,
  signal?: 'INT' | 'TERM' | 'USR1',
): Promise<void> {
  const argv = signal ? ['scancel', '-s', signal, jobId] : ['scancel', jobId];
  const r = await target.exec(argv, { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`scancel ${jobId} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
}
