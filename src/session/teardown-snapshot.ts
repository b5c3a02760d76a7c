/**
 * nsa-dbg's own look at every rank at the first sign that the run is being torn down — a rank
 * exited while others live, torchrun stopping its workers, the job cancelled — before they are gone:
 * /proc state, wchan and CPU of each (one command per node), and the GPUs' processes where
 * nvidia-smi answers. Recorded once per run as a `teardown` probe event in the run's probe file,
 * which the evidence reads back (live and `analyze` alike); the verdict says what it saw. As the run
 * ends, the kernel log of each rank's node is read for OOM kills of its pids (the cause of a SIGKILL
 * that leaves no last words), recorded as `oom-kill` events.
 */
import type { GpuProcess, ProbeEvent, ProcState, TeardownRank } from '../ingest/events.js';
import { oomKillsOf } from '../runs/kernel-log.js';
import type { ProbeFile } from '../runs/probe-file.js';
import { type ProcReadingWithSignals, readProcMany } from '../runs/proc-batch.js';
import { cpuPctBetween, localProcStates } from '../runs/proc-facts.js';
import { type PidRouting, procIsLocal, type Target } from '../targets/target.js';
import { debugLog } from '../util/debug-log.js';
import { rankSetText } from '../util/rank-set.js';
import { gpuProcessesOf } from './gpu-poller.js';
import type { LiveModel } from './live-model.js';
import { teardownSign } from './teardown-signs.js';

/** the second reading that gives CPU %: short, the ranks may be stopped any moment */
const CPU_WINDOW_MS = 300;
/**
 * How often the ranks' pids are checked for one that exited. torchrun's monitor may notice a dead
 * worker within a second and stop the rest at once, so on this machine (a few file reads) often; a
 * remote box costs a command each time; a run across nodes is not polled (see the constructor).
 */
const LIVENESS_LOCAL_MS = 250;
const LIVENESS_REMOTE_MS = 2000;
/**
 * while fewer than two ranks' pids are known there is nothing to compare (pollLiveness): the timer
 * wakes the process less often (an idle dashboard's wake-ups)
 */
const NO_RANKS_MS = 1000;
/** a look at every rank's process costs a read each: at least this long between looks, per rank */
const LIVENESS_MS_PER_RANK = 8;
/** a kernel log that does not answer in this long is left out */
const KERNEL_LOG_MS = 5000;

export interface TeardownSnapshotOptions {
  /** where the ranks' /proc is read (the run's checks target: on a rank's own node) */
  target: Target;
  model: LiveModel;
  /** the run's probe file, where the records go */
  probes: ProbeFile;
  /** every rank's trainer pid known now */
  ranks: () => Array<[number, number]>;
  /** nvidia-smi where the GPUs are (absent: none to ask) */
  gpu?: { target: Target; smi: string[] };
  /**
   * read the output for signs (default on); off for a re-attached run, whose old output is replayed
   * first: a sign in it is history, and its pids may be someone else's now
   */
  watchOutput?: boolean;
}

type Readings = { at: number; procs: Map<number, ProcReadingWithSignals> };

/** a pid with no state (gone) or a zombie's or dead one's has ended */
const ended = (state: ProcState | null | undefined) => state === undefined || state === 'Z' || state === 'X';

export class TeardownSnapshot {
  private stopped = false;
  private taking: Promise<void> | null = null;
  private polling = false;
  private lastPollMs = 0;
  private timer: NodeJS.Timeout | null = null;
  /** how often the pids are looked at (null: not at all, a run across nodes) */
  private readonly everyMs: number | null;
  private readonly startedS: number;
  /** the first sign of teardown and when it was seen (null: none yet) */
  private sign: { what: string; atMs: number } | null = null;

  constructor(private readonly o: TeardownSnapshotOptions) {
    this.startedS = Date.now() / 1000;
    if (o.watchOutput !== false) o.model.lineWatchers.add(this.onLine);
    // across nodes (srun --overlap, a host's connection per node) a command per node every few
    // seconds for the whole run costs too much (64 nodes: 64 sruns): the output's signs only there
    const routed = typeof (o.target as Partial<PidRouting>).execForPid === 'function';
    this.everyMs = routed ? null : o.target.kind === 'local' ? LIVENESS_LOCAL_MS : LIVENESS_REMOTE_MS;
    this.schedule(this.everyMs ?? 0);
  }

  /** the next look in `ms`, and the one after it at the pace the look's rank count asks for */
  private schedule(ms: number): void {
    const every = this.everyMs;
    if (every === null || this.stopped) return;
    this.timer = setTimeout(() => {
      const ranks = this.tick();
      this.schedule(ranks >= 0 && ranks < 2 ? Math.max(every, NO_RANKS_MS) : every);
    }, ms);
    this.timer.unref?.();
  }

  /** every output line, as it is read: a sign of teardown is acted on at once, not at the next tick */
  private readonly onLine = (text: string): void => {
    if (this.taking !== null || this.stopped) return;
    const nodes = this.o.model.evidence.nodes;
    const sign = teardownSign(text, (task, local) =>
      nodes.placesTask(task) ? nodes.globalRank(task, local) : null,
    );
    if (sign !== null) this.take(sign, null);
  };

  /**
   * its own clock, not the checks' tick (once a second while no rank is silent); returns how many
   * ranks' pids are known (-1: not looked at now)
   */
  private tick(): number {
    if (this.taking !== null || this.stopped || this.polling) return -1;
    // many ranks: each look reads every rank's /proc, so looks are spaced by the count (256 ranks:
    // every 2 s), keeping the cost of watching flat as the job grows
    const now = Date.now();
    const ranks = this.o.ranks().length;
    if (ranks < 2 || now - this.lastPollMs < LIVENESS_MS_PER_RANK * ranks) return ranks;
    this.lastPollMs = now;
    this.polling = true;
    void this.pollLiveness().finally(() => {
      this.polling = false;
    });
    return ranks;
  }

  /** nsa-dbg is stopping the run itself: what follows is its own doing, no teardown to look at */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.o.model.lineWatchers.delete(this.onLine);
  }

  /** a rank whose process is gone (or a zombie) while another still runs: the run is coming apart */
  private async pollLiveness(): Promise<void> {
    const ranks = this.o.ranks();
    if (ranks.length < 2) return;
    const at = Date.now();
    const pids = [...new Set(ranks.map(([, p]) => p))];
    // on this machine the states alone, read synchronously (the snapshot reads every fact itself
    // once one has ended); elsewhere one command per node gives every fact, kept as the first readings
    let states: Map<number, ProcState | null>;
    let first: Readings | null = null;
    if (procIsLocal(this.o.target)) states = localProcStates(pids);
    else {
      const procs = await readProcMany(this.o.target, pids).catch(() => null);
      if (procs === null || this.taking !== null || this.stopped) return;
      states = new Map([...procs].map(([pid, r]) => [pid, r.state]));
      first = { at, procs };
    }
    const gone = ranks.filter(([, p]) => ended(states.get(p))).map(([r]) => r);
    if (gone.length === 0 || gone.length === ranks.length) return;
    this.take(`${rankSetText(gone)} exited`, first);
  }

  /** the first sign that the run is being torn down, and when it was seen; null while none */
  signSeen(): { what: string; atMs: number } | null {
    return this.sign;
  }

  private take(trigger: string, first: Readings | null): void {
    this.sign = { what: trigger, atMs: first?.at ?? Date.now() };
    debugLog(`teardown: ${trigger}; snapshot of every rank`);
    this.taking = this.snapshot(trigger, first).catch((e) => debugLog(`teardown snapshot: ${String(e)}`));
  }

  private async snapshot(trigger: string, first: Readings | null): Promise<void> {
    const ranks = this.o.ranks();
    if (ranks.length === 0) return;
    const pids = ranks.map(([, p]) => p);
    const read = async (): Promise<Readings> => ({
      at: Date.now(),
      procs: await readProcMany(this.o.target, pids),
    });
    const gpu = this.gpuProcesses();
    const a = first ?? (await read());
    await new Promise((r) => setTimeout(r, CPU_WINDOW_MS));
    const b = await read();
    const list: TeardownRank[] = ranks.map(([rank, pid]) => {
      const ra = a.procs.get(pid);
      const rb = b.procs.get(pid);
      const cpuPct =
        ra && rb ? cpuPctBetween({ ticks: ra.ticks, atMs: a.at }, { ticks: rb.ticks, atMs: b.at }) : null;
      return {
        rank,
        pid,
        state: ra?.state ?? null,
        ...(ra?.wchan ? { wchan: ra.wchan } : {}),
        cpuPct: cpuPct === null ? null : Math.round(cpuPct * 10) / 10,
      };
    });
    const procs = await gpu;
    await this.record({
      kind: 'teardown',
      ts: this.o.model.trainerNowS(a.at),
      trigger,
      ranks: list,
      ...(procs === null ? {} : { gpuProcesses: procs }),
    });
  }

  /**
   * One record for the probe file, through the run's one writer of it: not through the stack
   * sampler, which stops recording once nsa-dbg stops the run (the kernel's word on a kill is
   * evidence however the run ended).
   */
  private record(e: ProbeEvent): Promise<void> {
    return this.o.probes.record(e);
  }

  private async gpuProcesses(): Promise<GpuProcess[] | null> {
    const g = this.o.gpu;
    return g === undefined ? null : ((await gpuProcessesOf(g.target, g.smi, 3000))?.slice(0, 256) ?? null);
  }

  /**
   * The run has ended: the snapshot in flight is recorded, and the kernel log of each rank's node is
   * read for OOM kills of the ranks' pids since the run began. Before the probe file is closed.
   */
  async settle(opts: { cleanExit?: boolean } = {}): Promise<void> {
    this.stop();
    await this.taking;
    // a run that exited 0 lost no rank to the OOM killer: no kernel log to read (up to 5 s before
    // the verdict, while the dashboard showed an exited run with no verdict of its own yet)
    if (opts.cleanExit === true) return;
    const ranks = this.o.ranks();
    const rankOf = new Map(ranks.map(([r, p]) => [p, r]));
    const timeout = new Promise<null>((r) => setTimeout(() => r(null), KERNEL_LOG_MS).unref?.());
    const kills = await Promise.race([
      oomKillsOf(
        this.o.target,
        ranks.map(([, p]) => p),
        this.startedS - 60,
      ).catch(() => null),
      timeout,
    ]);
    for (const k of kills?.values() ?? []) {
      const rank = rankOf.get(k.pid);
      if (rank === undefined) continue;
      await this.record({
        kind: 'oom-kill',
        ts: k.atS ?? this.o.model.trainerNowS(Date.now()),
        rank,
        pid: k.pid,
        process: k.process,
        memcg: k.memcg,
        ...(k.anonRssKiB === undefined ? {} : { anonRssKiB: k.anonRssKiB }),
        ...(k.totalVmKiB === undefined ? {} : { totalVmKiB: k.totalVmKiB }),
      });
    }
  }
}
