/**
 * The batch script of a Slurm run, written into the run dir so it can be read and re-submitted by
 * hand (`sbatch job.sbatch`). The conventional multi-node shape, nothing invented: one torchrun
 * agent per task (one task per node) started by `srun`, the agents meeting at a c10d rendezvous on
 * the job's first node, the job id as the rendezvous id. nsa-dbg adds only what it needs to read the
 * job: `--label` on srun (each output line says which agent printed it, so `[default0]:` of the
 * second node is told from the first's), a `nodes.jsonl` line per agent (task, node, pid), and the
 * job's exit status in `exit_code`, as every nsa-dbg run has.
 */

import { NODES_FILE } from '../ingest/node-map.js';
import type { RunSpec } from '../runs/launcher.js';
import { shExports, shJoin, shQuote } from '../util/sh-quote.js';

export const SBATCH_FILE = 'job.sbatch';
export const NODE_SCRIPT = 'node.sh';
export const JOB_ID_FILE = 'job_id';
export const DEFAULT_RDZV_PORT = 29500;

export interface SlurmSettings {
  /** nodes (one torchrun agent each) */
  nodes: number;
  partition?: string;
  /** --time, as sbatch takes it (`30`, `2:00:00`) */
  time?: string;
  /** more sbatch options, given on the sbatch command line (they override the script's lines) */
  sbatchArgs: string[];
  /** the c10d rendezvous port on the first node */
  rdzvPort: number;
  /** how many words of the torchrun argv are the command itself (`python3 -m torch.distributed.run`) */
  launcherWords: number;
}

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
    `cd ${shQuote(spec.cwd)} || { echo "nsa-dbg: cannot cd to ${spec.cwd.replace(/[^\w./-]/g, '?')}" >&2; exit 97; }`,
    'export PYTHONUNBUFFERED=1',
    shExports({ NSA_DBG_RUN_DIR: spec.runDir, NSA_DBG_OUT_DIR: spec.outDir }),
    shExports(spec.env),
    '# the rendezvous lives on the first node of the allocation',
    'head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
    `export NSA_DBG_RDZV="$head:${s.rdzvPort}"`,
    `srun --label --kill-on-bad-exit=0 sh ${d}/${NODE_SCRIPT}`,
    `rc=$?; echo "$rc" > ${d}/exit_code.tmp && mv ${d}/exit_code.tmp ${d}/exit_code`,
    'exit "$rc"',
    '',
  ].join('\n');
}

/** the watcher's shell text (@OUT@ and @NPROC@ filled in) */
const WORKER_WATCH = [
  '(',
  '  seen=" "; n=0; i=0',
  '  while [ "$n" -lt @NPROC@ ] && [ "$i" -lt 600 ] && kill -0 "$agent" 2>/dev/null; do',
  '    for s in /proc/[0-9]*/stat; do',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
  '      p=${s#/proc/}; p=${p%/stat}',
  '      case "$seen" in *" $p "*) continue ;; esac',
  '      [ "$(sed \'s/.*) //\' "$s" 2>/dev/null | cut -d\' \' -f2)" = "$agent" ] || continue',
  "      env=$(tr '\\000' '\\n' < \"/proc/$p/environ\" 2>/dev/null)",
  "      r=$(printf '%s\\n' \"$env\" | sed -n 's/^RANK=//p')",
  "      l=$(printf '%s\\n' \"$env\" | sed -n 's/^LOCAL_RANK=//p')",
  '      [ -n "$r" ] && [ -n "$l" ] || continue',
  '      printf \'{"task": %s, "node": "%s", "rank": %s, "localRank": %s, "pid": %s}\\n\' "$task" "$node" "$r" "$l" "$p" >> @OUT@',
  '      seen="$seen$p "; n=$((n + 1))',
  '    done',
  '    sleep 1; i=$((i + 1))',
  '  done',
  ') </dev/null >/dev/null 2>&1 &',
].join('\n');

/**
 * Where one torchrun agent sits and how it finds its peers, as shell words for its script. Under
 * Slurm they come from the task's environment; for `--hosts` nsa-dbg knows them when it writes the
 * script (src/hosts/).
 */
export interface AgentPlace {
  /** the agent's index (srun task / host), a shell word */
  task: string;
  /** the node's name as the evidence will show it, a shell word */
  node: string;
  /** the number of agents, a shell word */
  nnodes: string;
  /** host:port of the c10d rendezvous, a shell word */
  endpoint: string;
  /** the rendezvous id, a shell word */
  id: string;
}

export const SLURM_PLACE: AgentPlace = {
  task: '"$SLURM_PROCID"',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
  node: '"${SLURMD_NODENAME:-$(hostname)}"',
  nnodes: '"$SLURM_NTASKS"',
  endpoint: '"$NSA_DBG_RDZV"',
  id: '"$SLURM_JOB_ID"',
};

/**
 * What each agent runs (an srun task, or one host of `--hosts`): note where it is, start a small
 * watcher that records each worker torchrun starts (its RANK and LOCAL_RANK from its own
 * environment, so ranks are placed on nodes whatever order the rendezvous gave), then become the
 * torchrun agent (exec: srun's signals reach torchrun itself, which passes SIGINT/SIGTERM on to its
 * workers).
 */
export function nodeScript(
  spec: RunSpec,
  s: Pick<SlurmSettings, 'launcherWords'>,
  place = SLURM_PLACE,
): string {
  const out = `${shQuote(spec.runDir)}/${NODES_FILE}`;
  const cmd = spec.argv.slice(0, s.launcherWords);
  const rest = spec.argv.slice(s.launcherWords);
  const nproc = spec.launcher?.nprocPerNode ?? 1;
  return [
    '#!/bin/sh',
    `# one torchrun agent of nsa-dbg run ${spec.runId}${place === SLURM_PLACE ? `, started by srun from ${SBATCH_FILE}` : ''}`,
    `task=${place.task}`,
    `node=${place.node}`,
    'agent=$$',
    `printf '{"task": %s, "node": "%s", "pid": %s}\\n' "$task" "$node" "$agent" >> ${out}`,
    "# torchrun's workers are its children: each is recorded once with its ranks (for 10 min at most)",
    WORKER_WATCH.replace('@NPROC@', String(nproc)).replace('@OUT@', out),
    `exec ${shJoin(cmd)} --nnodes ${place.nnodes} --rdzv_backend c10d --rdzv_endpoint ${place.endpoint} --rdzv_id ${place.id} ${shJoin(rest)}`,
    '',
  ].join('\n');
}
