/**
 * The output lines that say a run is being torn down, in words for the verdict ("torchrun is
 * stopping the workers"). Each comes a moment before the ranks are gone: torchrun prints "Sending
 * process … closing signal" just before it signals, and a rank's traceback seconds before torchrun's
 * monitor sees the rank exit (its monitor interval, 5 s by default) and stops the rest.
 */

import { slurmCancelOf } from '../ingest/slurm-cancel.js';

/** a task's local rank → the global rank, where the run's node records place it (else null) */
export type GlobalRankOf = (task: number, localRank: number) => number | null;

/** `srun --label`'s and `--hosts`' task prefix at the start of a line (`1: `) */
const TASK = /^(\d+): /;

/** "rank 3" where the line's task places its local rank, else "local rank 1" */
function rankText(line: string, localRank: string, rankOf?: GlobalRankOf): string {
  const task = TASK.exec(line)?.[1];
  const global = task === undefined ? null : (rankOf?.(Number(task), Number(localRank)) ?? null);
  return global === null ? `local rank ${localRank}` : `rank ${global}`;
}

type Say = (m: RegExpExecArray, rankOf?: GlobalRankOf) => string;

const SIGNS: Array<[RegExp, Say]> = [
  // a rank's crash: its traceback reaches the output as it exits. torchrun's tee prefixes the local
  // rank (`[default2]:`, `[2]:`; srun --label puts its task first, `1: `), torch 2.x's own print the
  // global one (`[rank2]:`)
  [
    /^(?:\d+: )?(?:\[(?:default)?(\d+)\]:)?(?:\[rank(\d+)\]:)?\s*Traceback \(most recent call last\):/,
    (m, rankOf) =>
      m[2]
        ? `rank ${m[2]} crashed`
        : m[1]
          ? `${rankText(m.input, m[1], rankOf)} crashed`
          : 'a traceback was printed',
  ],
  // torchrun 1.13 (`WARNING:torch.distributed.elastic…:`) and 2.x (`W1122 02:47:40.123000 140 torch/…]`)
  [
    /torch[./]distributed[./]elastic.*Received (\d+) death signal, shutting down workers/,
    (m) => `torchrun got signal ${m[1]}`,
  ],
  [
    /torch[./]distributed[./]elastic.*Sending process \d+ closing signal (SIG\w+)/,
    (m) => `torchrun began stopping the workers (${m[1]})`,
  ],
  [
    /torch[./]distributed[./]elastic.*failed \(exitcode: (-?\d+)\) local_rank: (\d+)/,
    (m, rankOf) => `${rankText(m.input, m[2]!, rankOf)} exited (${m[1]})`,
  ],
  // Slurm: the step's or job's cancellation (scancel, time limit), and srun giving up on the step
  [/\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT/, (m) => slurmCancelOf(m.input) ?? 'Slurm cancelled the job'],
  [
    /^srun: (?:Job step aborted|forcing job termination|Force Terminated)/,
    () => 'srun began ending the job step',
  ],
];

/**
 * the sign a line gives, in words, or null for any other line. `rankOf`: where a line of a run
 * across nodes (`1: [default1]:…`) names a local rank, the global one is said instead
 */
export function teardownSign(line: string, rankOf?: GlobalRankOf): string | null {
  for (const [re, say] of SIGNS) {
    const m = re.exec(line);
    if (m !== null) return say(m, rankOf);
  }
  return null;
}
