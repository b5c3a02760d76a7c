/**
 * What nsa-dbg itself finds out about a rank's process, beside what the trainer writes (events.ts):
 * /proc facts while a rank is silent, the answer to each stack request, the snapshot at the first
 * sign of a teardown, the kernel's OOM kills. Written to the run dir so `analyze` reads the same.
 */

/** One compute process from `nvidia-smi --query-compute-apps=pid,process_name,used_memory`. */
export interface GpuProcess {
  pid: number;
  name: string;
  usedMiB: number;
}

/** Linux process state letter from /proc/PID/stat: R running, S sleeping, D disk/uninterruptible, T stopped, Z zombie. */
export type ProcState = 'R' | 'S' | 'D' | 'T' | 't' | 'Z' | 'X' | 'I' | 'W' | 'P' | 'K';

/**
 * Process facts about one rank's trainer pid, taken by nsa-dbg on the box while the rank was silent
 * (written to `nsa-dbg-probes.jsonl` in the run dir so `analyze` reads the same facts later).
 */
export interface ProcProbeEvent {
  kind: 'proc';
  ts: number;
  rank: number;
  pid: number;
  state: ProcState | null;
  /** % of one core since the previous sample of this pid; null on the first one */
  cpuPct: number | null;
  /** kernel function the task sleeps in ("0" or "" when running) */
  wchan?: string;
}

/**
 * How a stack request was answered, by the first rung that did: `faulthandler` (nsa-dbg's own hook,
 * at once), `written` (the trainer's own SIGUSR1 dump), `py-spy`; or not: `none-within-5s` (the
 * trainer's handler did not run: its main thread is outside Python), `no-handler` (nothing could
 * take a stack without killing the process).
 */
export type DumpOutcome = 'faulthandler' | 'written' | 'none-within-5s' | 'no-handler' | 'py-spy';

/** One request for a rank's stack: SIGUSR1 (and whether a dump came back within 5 s) or py-spy. */
export interface DumpRequestEvent {
  kind: 'dump-request';
  /** when the request was made */
  ts: number;
  rank: number;
  pid: number;
  outcome: DumpOutcome;
  /** the dump file it produced, when it did */
  file?: string;
  /** why it was taken: a silent rank being checked, or the user's hot-frames sampling */
  purpose: 'suspect' | 'hot-frames' | 'user';
  /**
   * the stack hook's dump this request followed (its name): the trainer's own, richer dump, asked
   * for because the hook's said the main thread was in Python. Left unanswered (a loaded box, a
   * handler that writes slowly) it says nothing of where the main thread is: the hook's dump did
   */
  after?: string;
  /**
   * when the answer was seen (trainer clock). Until a little after it the rank ran our handler, not
   * its own code: a /proc reading then says R because we asked (stall-judge.ts)
   */
  answeredTs?: number;
}

/** one rank as nsa-dbg's teardown snapshot found it (src/session/teardown-snapshot.ts) */
export interface TeardownRank {
  rank: number;
  pid: number;
  /** null: the process was gone already */
  state: ProcState | null;
  wchan?: string;
  /** % of one core over the snapshot's short window; null when it could not be measured */
  cpuPct: number | null;
}

/**
 * nsa-dbg's own snapshot of every rank at the first sign that the run is being torn down (a rank
 * exited while others live, torchrun stopping its workers, the job cancelled): /proc state, wchan
 * and CPU of each, and the GPUs' processes where nvidia-smi answers. Taken once per run.
 */
export interface TeardownEvent {
  kind: 'teardown';
  ts: number;
  /** the sign, in words: "rank 2 exited", "torchrun is stopping the workers", … */
  trigger: string;
  ranks: TeardownRank[];
  /** nvidia-smi's compute processes at that moment (absent: no nvidia-smi there) */
  gpuProcesses?: GpuProcess[];
}

/**
 * The kernel's OOM killer ended a rank's process, as the kernel log says (dmesg, journalctl -k,
 * kern.log on the rank's node): the cause of a SIGKILL that leaves no last words.
 */
export interface OomKillEvent {
  kind: 'oom-kill';
  ts: number;
  rank: number;
  pid: number;
  /** the process name the kernel logged */
  process: string;
  /** resident anonymous memory at the kill (kB as logged), when the line says */
  anonRssKiB?: number;
  totalVmKiB?: number;
  /** a cgroup's limit (`Memory cgroup out of memory`) rather than the whole machine's */
  memcg: boolean;
}

export type ProbeEvent = ProcProbeEvent | DumpRequestEvent | TeardownEvent | OomKillEvent;
