/**
 * Slurm's word that it ended a job (slurmstepd writes it into the job's output as it signals the
 * tasks): `slurmstepd: error: *** JOB 12 ON node1 CANCELLED AT 2026-11-26T18:00:00 ***` after a
 * `scancel`, `… DUE TO TIME LIMIT ***` at the time limit (also PREEMPTION, NODE FAILURE), `*** STEP
 * 12.0 ON …` for a job step. The SIGTERM the ranks got then is Slurm's.
 */
const CANCELLED = /\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT \S+(?: DUE TO ([A-Z ]+?))? \*\*\*/;

/** what ended the job, to follow "when" ("Slurm cancelled the job", "the job hit its time limit"), or null */
export function slurmCancelOf(line: string): string | null {
  if (!line.includes('CANCELLED AT')) return null;
  const m = CANCELLED.exec(line);
  if (m === null) return null;
  const why = m[1]?.toLowerCase();
  if (why === undefined) return 'Slurm cancelled the job';
  if (why === 'time limit') return 'the job hit its time limit';
  if (why === 'preemption') return 'Slurm preempted the job';
  return `Slurm cancelled the job (${why})`;
}
