/**
 * One interface for the ways a run is launched (a PTY here, detached, a Slurm job, one agent per
 * host): small capabilities that the run controller, the session, the checks and the listing ask
 * for, each kind providing them in its own file (src/runs/pty-kind.ts, src/runs/detached-kind.ts,
 * src/slurm/slurm-kind.ts, src/hosts/hosts-kind.ts; src/launch/kinds.ts picks one by name). Nothing
 * outside those files branches on which kind a run is.
 */
import type { StopPolicy } from '../lanes/lane.js';
import type { PtyHandle, Target } from '../targets/target.js';
import type { FollowerFactory } from './follower.js';
import type { LaunchSpec } from './launch-spec.js';
import type { RunSpec } from './launcher.js';
import type { StoppableRun } from './stop.js';

/** what a launch tells the run controller as it goes */
export interface LaunchEvents {
  /** the run is under way where no pid file of its own says so (its job runs, an agent is up) */
  running(): void;
  /** what the launch says of itself changed (the header's line) */
  changed(): void;
  /** one agent of a run across nodes ended with `code` (the run goes on until every agent has) */
  agentExited(agent: string, code: number): void;
  /** the launcher is gone: the run's exit_code when it was written, else `code` */
  ended(code: number | null): void;
  /** raw terminal output of a launcher that runs in this nsa-dbg's own PTY */
  ptyData(data: string): void;
}

export type Size = { cols: number; rows: number };

/** what a kind gets to start or pick up one run */
export interface LaunchContext<L extends LaunchSpec = LaunchSpec> {
  target: Target;
  spec: RunSpec & { launcher: L };
  events: LaunchEvents;
  /** the trainer's pid, once its pid file said it */
  pid(): number | undefined;
  waitForPid(timeoutMs: number): Promise<number | undefined>;
  exited(): boolean;
}

/** a terminal on the run for `t`; `release` closes only what was opened for the hand-over */
export interface RunTerminal {
  pty: PtyHandle;
  release(): void;
}

/** `K`: a launch that can be cancelled as a whole, after a prompt */
export interface Cancellable {
  /** what `K` would do, for its confirm */
  cancelText(): string;
  cancel(): Promise<{ message: string; cancelled: boolean }>;
}

/** the quit prompt's facts: whether quitting leaves the run, and how a stop would go */
export interface QuitFacts {
  leave: boolean;
  policy: StopPolicy;
  /** the session's target, as the header names it */
  targetLabel: string;
}

/** what a dump request did: the words for the user, and whether a dump file will answer it */
export interface DumpAsk {
  message: string;
  /** signals went out to handlers that write a dump file: its arrival answers the request */
  sent: boolean;
}

/** One run's launch while nsa-dbg follows it. */
export interface ActiveLaunch {
  /** a file of the run folder as the followers read it: the launch's own (an agent's pid or exit) */
  noteFile?(name: string, chunk: Buffer): void;
  /** a terminal on the run (throws with the reason when there is none) */
  terminal(size: Size): Promise<RunTerminal>;
  /** what the stop ladder acts on; null: nothing was started that could be stopped */
  stoppable(): Promise<StoppableRun | null>;
  /** `d` before any rank has named its pid in a heartbeat: the launch's own way, or why not */
  requestDump(): Promise<DumpAsk>;
  /** the target the run's processes are reached through, for stack requests and /proc facts */
  checksTarget(nodeOfPid: (pid: number) => string | null): Target;
  /** the header's words on the launch (`job 41 RUNNING on gpu[01-02]`); null: the pid says enough */
  line(): string | null;
  /** the quit prompt's words */
  quitWords(q: QuitFacts): string;
  /** `K`, where the launch has it */
  readonly cancellable?: Cancellable;
  dispose(): void;
}

/** a run's state in `attach`'s listing */
export interface RunStatus {
  /** `pending`: a job waiting for its nodes */
  status: 'running' | 'exited' | 'lost' | 'starting' | 'pending';
  exitCode?: number;
  pid?: number;
  /** the listing line's words on the launch (`job 41 PENDING (Resources)`) */
  note?: string;
  /** more fields of the JSON listing (a Slurm run's `job`) */
  extra?: Record<string, unknown>;
}

/** where a launch sends runs, as a notebook cell records it and a trial key counts it */
export interface LaunchPlace {
  /** `local`, `user@host`, `slurm:local`, `node-a,node-b` */
  label: string;
  /** what else of the launch decides how a run goes (a Slurm job's nodes and options) */
  key?: Record<string, unknown>;
}

/**
 * A run across nodes whose worker failed is over, but it may not end by itself: torchrun stops the
 * failed node's workers, then waits up to 5 min at its exit barrier for the other agents, and a peer
 * that never joined the collective (its rank failed before init_process_group) leaves the other
 * nodes' ranks waiting in it for up to 30 min, which is no evidence of anything. A crash in a
 * collective ends every node within seconds (gloo and NCCL see the closed connection), so the rest
 * of the run gets this long to end on its own, then is stopped.
 */
export const WORKER_FAILURE_GRACE_MS = 15_000;

/** the capability of a kind whose run spans nodes (`--slurm`, `--hosts`) */
export interface AcrossNodes {
  /** after a worker (or an agent) failed, how long the rest get to end on their own */
  failureGraceMs: number;
}

/** One way of launching a run. */
export interface LaunchKind<L extends LaunchSpec = LaunchSpec> {
  /** where runs of this launch go, from the target the session reaches (its label) */
  place(launch: L, targetLabel: string): LaunchPlace;
  /** the spec as this kind runs it: what it needs of the lane checked (throws), its layout set */
  plan(spec: RunSpec & { launcher: L }): RunSpec;
  /** launch a run whose dir is written (command.json, stack hook) */
  start(ctx: LaunchContext<L>, size: Size): Promise<ActiveLaunch>;
  /** pick up a run launched earlier, by this nsa-dbg or another */
  attach(ctx: LaunchContext<L>): Promise<ActiveLaunch>;
  /** how its files are followed: the kind's own way, or `plain` (a tail, or a remote dir's mirror) */
  follower(target: Target, spec: RunSpec & { launcher: L }, plain: FollowerFactory): FollowerFactory;
  /** a run whose agents span nodes: what a worker's failure means for the rest (absent: one box) */
  readonly acrossNodes?: AcrossNodes;
  /**
   * before a start: the trainer command must exist where it will run (throws CommandNotFound or
   * ScriptNotFound). Absent where the kind cannot look from here (the nodes of a job or of hosts).
   */
  checkCommand?(target: Target, spec: RunSpec, o: { defaultCommand: boolean }): Promise<void>;
  /** quitting leaves the run for `attach` (`attached`: this nsa-dbg picked it up, did not start it) */
  leavesRunningOnQuit(attached: boolean): boolean;
  /** where the GPU panel's nvidia-smi runs */
  gpuTarget(target: Target): Target;
  /**
   * the target an `attach` follows the run through, from the one its folder was found on
   * (`connect`: an SSH connection to a host by its alias)
   */
  reconnect(
    base: Target,
    spec: RunSpec & { launcher: L },
    connect: (alias: string) => Promise<Target>,
  ): Promise<Target>;
  /** the run's state for the listing, from its folder (and its scheduler) */
  status(target: Target, runDir: string, spec: RunSpec & { launcher: L }): Promise<RunStatus>;
}

/** the command the quit prompt offers for picking a run up again */
export function attachCommand(targetLabel: string, runId: string): string {
  return `nsa-dbg attach${targetLabel === 'local' ? '' : ` --host ${targetLabel}`} ${runId}`;
}

/** the quit prompt's words on a stop (`where`: ` on every host (a, b)`) */
export function stopWords(q: QuitFacts, runDir: string, where = ''): string {
  return `The run will be stopped${where} (${q.policy.halt ? '.HALT, then ' : ''}SIGINT, then SIGKILL). Evidence stays in ${runDir}`;
}

/**
 * The kinds that start one torchrun agent per node need a torchrun lane; `flag` is how the user
 * asked for the kind.
 */
export function requireTorchrun(spec: RunSpec, flag: string): void {
  if (spec.torchrun === undefined)
    throw new Error(
      `${flag} starts one torchrun agent per node: lane ${spec.lane} has no launcher (add launcher: { torchrun: { nproc_per_node: G } } to it)`,
    );
}
