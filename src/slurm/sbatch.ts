/**
 * The batch script of a Slurm run, written into the run dir so it can be read and re-submitted by
 * hand (`sbatch job.sbatch`). The conventional multi-node shape, nothing invented: one torchrun
 * agent per task (one task per node) started by `srun`, the agents meeting at a c10d rendezvous on
 * the job's first node, the job id as the rendezvous id. nsa-dbg adds only what it needs to read the
 * job: `--label` on srun (each output line says which agent printed it, so `[default0]:` of the
 * second node is told from the first's), a `nodes.jsonl` line per agent (task, node, pid), and the
 * job's exit status in `exit_code`, as every nsa-dbg run has.
 */

import { EXIT_CODE_FILE, shWriteWhole } from '../ingest/launcher-files.js';
import { type AgentPlace, NODE_SCRIPT } from '../runs/agent-script.js';
import type { SlurmLaunch } from '../runs/launch-spec.js';
import type { RunSpec } from '../runs/launcher.js';
import { runEnvironment } from '../runs/run-env.js';
import { shQuote } from '../util/sh-quote.js';

export const SBATCH_FILE = 'job.sbatch';
export const JOB_ID_FILE = 'job_id';

/** a Slurm launch's settings (command.json's `launcher`) */
export type SlurmSettings = Omit<SlurmLaunch, 'kind'>;

/** `#SBATCH` lines for what nsa-dbg chooses; the user's own options go on the command line */
function directives(spec: RunSpec, s: SlurmSettings): string[] {
  const d = (o: string) => `#SBATCH ${o}`;
  return [
    d(`--job-name=${shQuote(`nsa-dbg-${spec.lane}`)}`),
    d(`--nodes=${s.nodes}`),
    d('--ntasks-per-node=1'),
    // one output file for the whole job, appended to: the run's stdout.log, read like any run's
    d(`--output=${shQuote(`${spec.runDir}/stdout.log`)}`),
    d('--open-mode=append'),
    ...(s.partition ? [d(`--partition=${shQuote(s.partition)}`)] : []),
    ...(s.time ? [d(`--time=${shQuote(s.time)}`)] : []),
  ];
}

/** the job script: environment, rendezvous endpoint, one agent per task, the exit status */
export function sbatchScript(spec: RunSpec, s: SlurmSettings): string {
  const d = shQuote(spec.runDir);
  return [
    '#!/bin/bash',
    ...directives(spec, s),
    `# nsa-dbg run ${spec.runId} (lane ${spec.lane}). Submit again by hand with: sbatch ${SBATCH_FILE}`,
    ...runEnvironment(spec),
    '# the rendezvous lives on the first node of the allocation',
    'head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
    `export NSA_DBG_RDZV="$head:${s.rdzvPort}"`,
    `srun --label --kill-on-bad-exit=0 sh ${d}/${NODE_SCRIPT}`,
    `rc=$?; ${shWriteWhole(d, EXIT_CODE_FILE, '"$rc"')}`,
    'exit "$rc"',
    '',
  ].join('\n');
}

/** where an srun task's agent sits: from the task's environment */
export const SLURM_PLACE: AgentPlace = {
  task: '"$SLURM_PROCID"',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
  node: '"${SLURMD_NODENAME:-$(hostname)}"',
  nnodes: '"$SLURM_NTASKS"',
  endpoint: '"$NSA_DBG_RDZV"',
  id: '"$SLURM_JOB_ID"',
};
