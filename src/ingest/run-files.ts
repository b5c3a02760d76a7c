/**
 * What each file of a run folder is: the one list. The reader (run-folder.ts), the followers that
 * tail a run dir (src/runs/run-watcher.ts) and the mirrors of remote run dirs (src/runs/mirror.ts)
 * all ask here, so no file is read by one and missed by another.
 *
 *   stdout.log                       the trainer's output (launcher: stdout+stderr)
 *   heartbeat_rank{R}.jsonl          heartbeat records; R is the rank of records that carry none
 *   heartbeat.jsonl                  a single-rank trainer's heartbeats (rank 0)
 *   stackdump_*.txt, watchdog_stackdump_*.txt, *.pyspy.txt, pyspy*.txt, faulthandler*.txt,
 *   *.faulthandler.txt               stack dumps (re-read whole as they grow, up to MAX_DUMP_BYTES)
 *   nsa-dbg-probes.jsonl             nsa-dbg's own /proc checks and stack requests
 *   nodes.jsonl                      where each rank runs (multi-node runs)
 *   nsa-dbg-clock.jsonl              when each part of the output arrived (written by nsa-dbg)
 *   training.csv, training_fsdp.csv  the trainer's per-step table (rows appended)
 *   nvsmi*.csv, nvidia-smi*.csv      nvidia-smi samples (either query kind)
 *   nsa-dbg-stacks_rank{R}_pid{P}.log  a rank's stacks from nsa-dbg's faulthandler hook
 *   nccl_trace_rank_{R}              PyTorch's Flight Recorder dump (a pickle of plain data)
 *   .HALT, .anomaly_type, exit_code, output_held, metrics.json, metrics_fsdp.json, env.json, mem_*.json
 *                                    small files read whole (their latest content counts)
 *   *.tmp, *.tmp-*, *.tmp.*          files being written (renamed into place when complete): never read
 */

import { FLIGHT_RECORDER_FILE } from './flight-recorder.js';
import { EXIT_CODE_FILE, LAUNCH_FILE, OUTPUT_HELD_FILE, PID_FILE } from './launcher-files.js';
import { PROBES_FILE } from './probes.js';

export type RunFileKind =
  | 'stdout'
  | 'heartbeat'
  | 'dump'
  | 'probes'
  | 'nodes'
  | 'clock'
  | 'table'
  | 'gpu-csv'
  | 'stack-log'
  | 'flight-recorder'
  | 'whole';

export const STDOUT_FILE = 'stdout.log';
export const NODES_FILE = 'nodes.jsonl';
export const CLOCK_FILE = 'nsa-dbg-clock.jsonl';
export { PROBES_FILE };

/** A stack dump bigger than this is not a stack dump worth holding: its head is parsed, the rest dropped. */
export const MAX_DUMP_BYTES = 1 << 20;
/** A small whole file bigger than this is not what its name says: it is not read. */
export const MAX_WHOLE_BYTES = 1 << 20;

/** File names of stack dumps: nsa-vibe signal and watchdog dumps, py-spy and faulthandler output. */
export const DUMP_FILE =
  /^(?:(?:watchdog_)?stackdump_.*\.txt|.*\.pyspy\.txt|pyspy.*\.txt|faulthandler.*\.txt|.*\.faulthandler\.txt)$/;
const HEARTBEAT = /^heartbeat(?:_rank(\d+))?\.jsonl$/;
const WHOLE = new RegExp(
  `^(?:\\.HALT|\\.anomaly_type|${EXIT_CODE_FILE}|${OUTPUT_HELD_FILE}|metrics(?:_fsdp)?\\.json|env\\.json|mem_.*\\.json)$`,
);
const TABLE = /^training(?:_fsdp)?\.csv$/;
const GPU_CSV = /^(?:nvsmi|nvidia-smi).*\.csv$/;
const TEMP = /\.tmp(?:[-.]|$)/;
/** nsa-dbg's stack hook's per-process log (src/ingest/stack-log.ts) */
const STACK_LOG = /^nsa-dbg-stacks_rank\d+_pid\d+\.log$/;

/** a file being written, to be renamed into place: no reader or mirror ever takes it */
export function isTempFile(name: string): boolean {
  return TEMP.test(name);
}

/** What a file (by its base name) is, or null when it is not evidence. */
export function runFileKind(name: string): RunFileKind | null {
  if (isTempFile(name)) return null;
  if (name === STDOUT_FILE) return 'stdout';
  if (HEARTBEAT.test(name)) return 'heartbeat';
  if (DUMP_FILE.test(name)) return 'dump';
  if (STACK_LOG.test(name)) return 'stack-log';
  if (FLIGHT_RECORDER_FILE.test(name)) return 'flight-recorder';
  if (name === PROBES_FILE) return 'probes';
  if (name === NODES_FILE) return 'nodes';
  if (name === CLOCK_FILE) return 'clock';
  if (TABLE.test(name)) return 'table';
  if (GPU_CSV.test(name)) return 'gpu-csv';
  if (WHOLE.test(name)) return 'whole';
  return null;
}

/** the rank a heartbeat file is named for (records without a `rank` key are that rank's) */
export function heartbeatFileRank(name: string): number {
  const m = HEARTBEAT.exec(name);
  return m?.[1] === undefined ? 0 : Number(m[1]);
}

/** the launcher's own files that a follower hands to the run controller (not evidence) */
const LAUNCHER_FILES = new Set([PID_FILE]);
/** the launcher's internals: nothing a person opens to see what happened */
const LAUNCHER_INTERNAL = new Set([PID_FILE, 'run.sh', LAUNCH_FILE, 'node.sh']);

/**
 * The files of a run folder a person would open (a notebook cell lists them): everything but files
 * being written, the launcher's internals and nsa-dbg's own bookkeeping of a mirror.
 */
export function isPersonFacingFile(name: string): boolean {
  return !isTempFile(name) && !LAUNCHER_INTERNAL.has(name) && !name.startsWith('.mirror');
}

/**
 * Which files of a run dir a follower tails: the evidence, and the launcher's pid. nsa-dbg's clock
 * is not among them: the session that writes it hands its records to the reader itself.
 */
export function isFollowedFile(name: string): boolean {
  const kind = runFileKind(name);
  return (kind !== null && kind !== 'clock') || LAUNCHER_FILES.has(name);
}

/**
 * How often a follower looks at each file of a folder while it grows, given the folder's listing.
 * Heartbeat records carry their own time, so reading them late changes no step's time or interval,
 * and a run of 64 ranks is 64 such files: at the 100 ms that the arrival-timed files need (the
 * trainer's output, its CSV table) they were most of the dashboard's polling, and each poll a
 * handful of system calls. They are read every half second; in a folder of more than 64 of them,
 * once a second (the dashboard publishes once a second): at 512 ranks every look at a file is a
 * read and a chunk through the reader, a thousand a second at half a second, and a second's wait
 * took the dashboard's CPU there down by a sixth (docs/performance.md).
 */
export function followPolls(
  names: readonly string[],
  basePollMs: number | undefined,
): (name: string) => number | undefined {
  // counted at the first heartbeat file asked for: a listing with nothing new to follow costs nothing
  let ms: number | undefined;
  const selfTimedMs = (): number => {
    ms ??= heartbeatPollMs(names.filter((n) => runFileKind(n) === 'heartbeat').length);
    return ms;
  };
  return (name) =>
    runFileKind(name) === 'heartbeat' ? Math.max(basePollMs ?? 0, selfTimedMs()) : basePollMs;
}

/** how often each heartbeat file is looked at while it grows, in a folder of `files` of them */
function heartbeatPollMs(files: number): number {
  return files > MANY_SELF_TIMED_FILES ? SELF_TIMED_POLL_MANY_MS : SELF_TIMED_POLL_MS;
}

/**
 * How much later a heartbeat may be read in a folder of `files` of them than in a run of a few
 * ranks (seconds). A live silence is judged that much later, so a many-rank run's once-a-second
 * reads make no rank look silent sooner than half-second reads did: with a lane's low `floorS`
 * (1.5 s in demo-many-flags) a rank beating twice a second would otherwise turn suspect, and be
 * asked for its stack, between two reads.
 */
export function heartbeatReadLagS(files: number): number {
  return (heartbeatPollMs(files) - SELF_TIMED_POLL_MS) / 1000;
}

const SELF_TIMED_POLL_MS = 500;
const SELF_TIMED_POLL_MANY_MS = 1000;
const MANY_SELF_TIMED_FILES = 64;

/**
 * Files only ever appended to while a run lives (the launcher's redirect, a trainer's JSONL, the
 * hook's log, nvidia-smi's loop): a follower may keep them open. A table or a small JSON may be
 * written anew by the trainer, and is looked at by its name.
 */
export function isAppendOnlyFile(name: string): boolean {
  const kind = runFileKind(name);
  return kind !== null && APPEND_ONLY.has(kind);
}

const APPEND_ONLY = new Set<RunFileKind>(['stdout', 'heartbeat', 'probes', 'nodes', 'stack-log', 'gpu-csv']);

/**
 * How a run's folder is laid out beyond the plain files above, as whoever launched the run knows
 * it (recorded in command.json as `layout`): the reader is told, it never guesses from the name of
 * a launcher.
 */
export interface RunLayout {
  /**
   * stdout.log lines begin with the label of the agent that printed them (`srun --label`, or a
   * `--hosts` cell's merged output): `[defaultN]:` is then local rank N of that agent
   */
  agentLabels?: boolean;
  /**
   * a folder holding one subfolder per host, each a copy of that host's run dir (`hosts/<alias>/`):
   * its heartbeats, dumps and small files count like the cell's own
   */
  hostsDir?: string;
  /** a host's files the reader leaves out under `hostsDir` (merged at the top, or one agent's only) */
  hostFilesAtTop?: string[];
  /** ranks per node (where output is placed before the node records say) */
  nprocPerNode?: number;
  /**
   * the trainer's own out_dir, copied as this run wrote it (`out/`): its heartbeats, dumps, table
   * and small files count like the run dir's own
   */
  outCopy?: string;
}

/** where the run dir keeps its copy of the trainer's own out_dir */
export const OUT_COPY_DIR = 'out';
/** nsa-dbg's own files: never read from a trainer's out_dir */
const OWN_KINDS = new Set<RunFileKind>(['stdout', 'probes', 'nodes', 'clock', 'stack-log']);

/**
 * A path in the run folder → what it is and under which name the evidence knows it, or null when
 * the reader leaves it out. Paths are relative to the run folder, with `/` between parts.
 */
export function classifyRunPath(path: string, layout: RunLayout = {}): RunFileKind | null {
  const parts = path.split('/');
  const base = parts[parts.length - 1]!;
  if (parts.length === 1) return runFileKind(base);
  if (parts.length === 2 && layout.outCopy !== undefined && parts[0] === layout.outCopy) {
    const kind = runFileKind(base);
    return kind === null || OWN_KINDS.has(kind) ? null : kind;
  }
  // a host's copy of its run dir: `hosts/<alias>/<file>`
  if (layout.hostsDir === undefined || parts.length !== 3 || parts[0] !== layout.hostsDir) return null;
  if (layout.hostFilesAtTop?.includes(base)) return null;
  const kind = runFileKind(base);
  return kind === 'clock' ? null : kind;
}

/** the subfolder of a cell holding each host's copy of its run dir (`hosts/<alias>/`) */
export const HOSTS_DIR = 'hosts';
/** a host's files merged line by line at the top of the cell (each line labelled with its host) */
export const MERGED_HOST_FILES: readonly string[] = [STDOUT_FILE, NODES_FILE];

/** output of one torchrun agent per node, labelled by agent (a Slurm job's `srun --label` output) */
export function agentsLayout(nprocPerNode: number): RunLayout {
  return { agentLabels: true, nprocPerNode };
}

/**
 * one agent per host, each host's run dir copied under `hosts/<alias>/`, their output and node
 * records merged at the top; a host's exit status and pid are one agent's, not the run's
 */
export function hostsLayout(nprocPerNode: number): RunLayout {
  return {
    agentLabels: true,
    nprocPerNode,
    hostsDir: HOSTS_DIR,
    hostFilesAtTop: [...MERGED_HOST_FILES, EXIT_CODE_FILE, PID_FILE],
  };
}
