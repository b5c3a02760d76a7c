/**
 * What one torchrun agent of a run across nodes runs (an srun task of a Slurm job, or one host of a
 * `--hosts` run): its node script. The same shape whatever started it; where the agent sits and how
 * it finds its peers (AgentPlace) is the launch kind's part.
 */
import { NODES_FILE } from '../ingest/run-files.js';
import { shJoin, shQuote } from '../util/sh-quote.js';
import type { RunSpec } from './launcher.js';

/** the agent's script in the run dir */
export const NODE_SCRIPT = 'node.sh';

/**
 * The watcher's shell text (@OUT@ and @NPROC@ filled in). Each look reads every /proc/PID/stat with
 * the shell's own `read` (no process started per pid: with `sed` and `cut` for each of a few hundred
 * pids, one look took seconds on a loaded box, and the workers of a short run had exited before it
 * saw them); a worker's environment is read only once it is known to be the agent's child. Five
 * looks a second until every worker is recorded, for 10 min at most.
 */
const WORKER_WATCH = [
  '(',
  '  seen=" "; n=0; i=0',
  '  while [ "$n" -lt @NPROC@ ] && [ "$i" -lt 3000 ] && kill -0 "$agent" 2>/dev/null; do',
  '    for s in /proc/[0-9]*/stat; do',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
  '      p=${s#/proc/}; p=${p%/stat}',
  '      case "$seen" in *" $p "*) continue ;; esac',
  '      st=""; read -r st 2>/dev/null < "$s" || [ -n "$st" ] || continue',
  // the fields after the command's closing parenthesis: state, then the parent's pid
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
  '      set -- ${st##*") "}',
  '      [ "$2" = "$agent" ] || continue',
  "      env=$(tr '\\000' '\\n' < \"/proc/$p/environ\" 2>/dev/null)",
  "      r=$(printf '%s\\n' \"$env\" | sed -n 's/^RANK=//p')",
  "      l=$(printf '%s\\n' \"$env\" | sed -n 's/^LOCAL_RANK=//p')",
  '      [ -n "$r" ] && [ -n "$l" ] || continue',
  '      printf \'{"task": %s, "node": "%s", "rank": %s, "localRank": %s, "pid": %s}\\n\' "$task" "$node" "$r" "$l" "$p" >> @OUT@',
  '      seen="$seen$p "; n=$((n + 1))',
  '    done',
  '    sleep 0.2; i=$((i + 1))',
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

/**
 * What each agent runs (an srun task, or one host of `--hosts`): note where it is, start a small
 * watcher that records each worker torchrun starts (its RANK and LOCAL_RANK from its own
 * environment, so ranks are placed on nodes whatever order the rendezvous gave), then become the
 * torchrun agent (exec: srun's signals reach torchrun itself, which passes SIGINT/SIGTERM on to its
 * workers).
 */
export function nodeScript(spec: RunSpec, place: AgentPlace, startedBy = ''): string {
  const out = `${shQuote(spec.runDir)}/${NODES_FILE}`;
  const words = spec.torchrun?.commandWords ?? 1;
  const cmd = spec.argv.slice(0, words);
  const rest = spec.argv.slice(words);
  const nproc = spec.torchrun?.nprocPerNode ?? 1;
  return [
    '#!/bin/sh',
    `# one torchrun agent of nsa-dbg run ${spec.runId}${startedBy ? `, ${startedBy}` : ''}`,
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
