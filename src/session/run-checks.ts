/**
 * What nsa-dbg checks on the box for one run: the stall prober (silent ranks → process facts and
 * stack samples), the `s` hot-frames sampling, and the moment a hang is confirmed. One per run, made
 * by the session with the run's one LiveModel; the verdict itself stays with the evidence.
 */
import type { CurrentSilence } from '../analysis/silences.js';
import { ProbeFile } from '../runs/probe-file.js';
import type { RunController } from '../runs/run-controller.js';
import { runPidIsLauncher } from '../runs/run-launcher.js';
import { StackSampler } from '../runs/stack-sampler.js';
import { debugLog, debugLogOn } from '../util/debug-log.js';
import { HotFrameSampling } from './hot-frames.js';
import { launcherTeardownDone } from './launcher-teardown.js';
import type { LiveModel } from './live-model.js';
import {
  askEverySilentRank,
  describeDumps,
  dumpEveryRank,
  settledWatch,
  verdictSettled,
} from './rank-dumps.js';
import { StallProber } from './stall-prober.js';
import type { HotFramesView } from './state.js';
import { StragglerSampling, samplingMode } from './straggler-sampling.js';
import { TeardownSnapshot, type TeardownSnapshotOptions } from './teardown-snapshot.js';

const CULPRIT_WAIT_MS = 15_000;
/** up to this many ranks a confirmation is looked for at every tick; past it once a second */
const FEW_RANKS = 16;
const MANY_RANKS_LOOK_MS = 1000;

/** how often the engine log says what the checks know of the ranks until a hang is confirmed */
const SILENCE_LOG_MS = 30_000;

/** the node a worker pid runs on, from the ranks' node records (null: not known yet) */
function nodeOfPid(model: LiveModel, pid: number): string | null {
  return model.evidence.nodes.nodeOfPid(pid, model.rankOfPid(pid));
}

export class RunChecks {
  private readonly sampler: StackSampler;
  private readonly prober: StallProber;
  private readonly teardown: TeardownSnapshot;
  /** every rank's stack sampled while it trains: who the others wait for (straggler-sampling.ts) */
  private readonly stragglers: StragglerSampling;
  private hot: HotFrameSampling | null = null;
  private confirmed: CurrentSilence | null = null;
  /** when the silences were last judged for a confirmation (tick) */
  private lookedAtMs = Number.NEGATIVE_INFINITY;
  private waiters: Array<(c: CurrentSilence) => void> = [];
  private nextSilenceLogMs = 0;

  constructor(
    private readonly run: RunController,
    private readonly model: LiveModel,
    private readonly onChange: () => void,
    teardown: Pick<TeardownSnapshotOptions, 'gpu' | 'watchOutput'> = {},
  ) {
    // stacks and /proc facts go through the run's launch: on a rank's own node where it has several
    const target = run.checksTarget((pid) => nodeOfPid(model, pid));
    // the run's probe file has one writer, shared by the checks that record what they find
    const probes = new ProbeFile(target, run.spec.runDir);
    this.sampler = new StackSampler({
      target,
      runDir: run.spec.runDir,
      probes,
      outDir: run.spec.outDir,
      dumpsSeen: () => model.evidence.dumpEvents().map((d) => ({ file: d.file, ts: d.ts })),
      dumpNamed: (name) => model.evidence.dump(name),
      workers: () => model.evidence.workers(),
      trainerNowS: () => model.trainerNowS(Date.now()),
    });
    this.prober = new StallProber({
      target,
      model,
      sampler: this.sampler,
      pidOf: (rank) => this.pidOf(rank),
    });
    this.teardown = new TeardownSnapshot({
      target,
      model,
      probes,
      ranks: () => this.rankPidList(),
      ...teardown,
    });
    // NSA_DBG_STRAGGLER_SAMPLING: 0 off; alternate:S, on and off in turns (the bench's cost)
    const mode = samplingMode(process.env.NSA_DBG_STRAGGLER_SAMPLING);
    this.stragglers = new StragglerSampling({ target, model, alternateS: mode.alternateS });
    if (mode.on) this.stragglers.start();
  }

  private pidOf(rank: number): number | undefined {
    // under a launcher (the lane's, or one in the command) the run's pid is its: never a rank to signal
    const own = runPidIsLauncher(this.run.spec) ? undefined : this.run.pid;
    return this.model.rankPids.get(rank) ?? (rank === 0 ? own : undefined);
  }

  /** the ranks to ask for stacks, with their pids (rank 0 of a direct run: the run's own pid) */
  private rankPidList(): Array<[number, number]> {
    const ranks = [...this.model.rankPids.entries()];
    const own = this.pidOf(0);
    if (ranks.length === 0 && own !== undefined) ranks.push([0, own]);
    return ranks;
  }

  /** `d`: a stack of every rank, each filed with its rank; null when no rank pid is known yet */
  dumpEveryRank(onDone: (msg: string) => void): string | null {
    const ranks = this.rankPidList();
    if (ranks.length === 0) return null;
    void dumpEveryRank(this.sampler, ranks).then((reqs) => onDone(describeDumps(reqs)));
    return `asking ${ranks.length} rank(s) for their stacks, one at a time…`;
  }

  /** stack sampling (`s`) under way: the session keeps checking often */
  get busy(): boolean {
    return this.hot?.running === true;
  }

  /** called every 250 ms while a rank is silent (else every second), while the run is live */
  tick(): void {
    this.prober.tick();
    if (this.confirmed !== null) return;
    // the look judges every silent rank: on many ranks once a second (at 512 silent ranks, four
    // looks a second were a seventh of the engine's time until the hang was confirmed)
    const now = Date.now();
    if (this.model.rankPids.size > FEW_RANKS && now - this.lookedAtMs < MANY_RANKS_LOOK_MS) return;
    this.lookedAtMs = now;
    const c = this.model.confirmedStall(now);
    if (c === null) {
      this.logSilences();
      return;
    }
    this.confirmed = c;
    // the ranks already known to wait for the culprit need no more samples: only the culprit's
    // judgement (and the asks of ranks not heard from) are still to come
    if (this.model.rankPids.size > FEW_RANKS) this.prober.hold(this.model.waitingForCulprit(now));
    debugLog(
      `run ${this.run.spec.runId}: hang confirmed, rank ${c.rank} step ${c.step}: ${c.judgement?.why ?? 'silence'}`,
    );
    this.onChange();
    // the facts at the moment of the decision go into the evidence before the stop (analyze reads
    // them too) and on many ranks, a stack request of every silent rank: the culprit is told from the
    // others by their stacks (or their lack of one), so none may be stopped unasked
    const t0 = Date.now();
    const took = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
    // both at once: the facts' /proc read waits behind the prober's round of every silent rank's
    // (seconds at 512 ranks), and neither the asks nor the verdict need anything from it; the stop
    // waits for it (up to 6.5 s after the verdict at 512 ranks on 2 cores: the culprit's node's
    // commands in a row)
    const facts = this.prober.recordNow(c.rank).then(
      () => debugLog(`run ${this.run.spec.runId}: the decision's facts recorded (${took()})`),
      (e: unknown) => debugLog(`run ${this.run.spec.runId}: the decision's facts: ${(e as Error).message}`),
    );
    void askEverySilentRank(this.sampler, this.model, (r) => this.pidOf(r))
      .then(() => debugLog(`run ${this.run.spec.runId}: every silent rank asked for its stack (${took()})`))
      .then(() => this.culpritsJudged())
      .then((settled) => {
        // nothing more to learn of these silences: no new round of them goes out before the stop
        if (settled) this.prober.settle();
        debugLog(`run ${this.run.spec.runId}: culprit judged (${took()})`);
      })
      .then(() => facts)
      // a crash's peers look hung while their launcher is still on its way to stopping them: its
      // teardown, not ours, is what the last words must record (launcher-teardown.ts)
      .then(() => this.launcherTeardown())
      .then((how) => debugLog(`run ${this.run.spec.runId}: launcher's teardown: ${how} (${took()})`))
      // the hang stands whatever failed while its evidence was gathered: the stop must still come
      .catch((e: unknown) =>
        debugLog(`run ${this.run.spec.runId}: evidence of the hang: ${(e as Error).message} (${took()})`),
      )
      .then(() => {
        for (const w of this.waiters.splice(0)) w(c);
      });
  }

  /**
   * Until a hang is confirmed, the engine log says every 30 s what the run looks like to the checks:
   * how many ranks were heard from, how far they got, how old their newest records are, and which
   * are silent in what state. A silence never decided can be told from one still being checked, a
   * run whose records stopped coming in from one whose ranks went quiet, and a gap between two of
   * these lines means the engine itself did not run.
   */
  private logSilences(): void {
    const now = Date.now();
    if (now < this.nextSilenceLogMs || !debugLogOn()) return;
    this.nextSilenceLogMs = now + SILENCE_LOG_MS;
    const ranks = this.model.evidence.detector.check(this.model.trainerNowS(now));
    const ages = ranks.flatMap((r) => (r.lastBeatAgeS === null ? [] : [r.lastBeatAgeS]));
    const steps = ranks.map((r) => r.step);
    const heard =
      ranks.length === 0 || ages.length === 0
        ? 'no rank heard from yet'
        : `${ranks.length} rank(s) heard from, steps ${Math.min(...steps)}–${Math.max(...steps)}, ` +
          `newest records ${Math.min(...ages).toFixed(1)}–${Math.max(...ages).toFixed(1)} s old`;
    const silent = this.model.silences(now);
    const states = new Map<string, number>();
    for (const c of silent) {
      const k = c.judgement?.state ?? 'unchecked';
      states.set(k, (states.get(k) ?? 0) + 1);
    }
    const counts = [...states].map(([k, n]) => `${n} ${k}`).join(', ');
    debugLog(
      `run ${this.run.spec.runId}: ${heard}; ${silent.length} silent${silent.length ? `, none confirmed: ${counts}` : ''}`,
    );
  }

  /**
   * On many ranks the first confirmed silence is often a rank waiting in a collective (blocked,
   * idle); the culprit whose stack is in its own code may still be between samples. Its judgement is
   * what the verdict names, so the stop waits (the prober keeps sampling) until no silent rank that
   * answers dumps is still being checked, at most 15 s. True when it ended settled (verdictSettled).
   */
  private async culpritsJudged(): Promise<boolean> {
    const deadline = Date.now() + CULPRIT_WAIT_MS;
    const settled = settledWatch(this.model);
    while (Date.now() < deadline) {
      // the culprit confirmed and every other silent rank's stack in, waiting for it: settled (a
      // request of the culprit still under way is the stop's to wait for, not the verdict's)
      if (settled()) return true;
      // a rank answers dumps when the evidence holds one of its samples, or when the sampler has just
      // filed one that the evidence has not read back yet (the probe file is followed like any
      // file, up to a second behind): without the second, the stop could come before its judgement
      const open = this.model
        .silences(Date.now())
        .some(
          (c) =>
            c.judgement?.state === 'checking' &&
            (c.judgement.evidence.samples > 0 || this.sampler.answeredSince(c.rank, c.sinceTs)),
        );
      // (settled() judges at most once a second: the last word is a judgement of now)
      if (!open) return verdictSettled(this.model);
      await new Promise((r) => setTimeout(r, 250));
    }
    return false;
  }

  private launcherTeardown() {
    return launcherTeardownDone({
      sign: () => this.teardown.signSeen(),
      exited: () => this.run.exited,
      nowMs: Date.now,
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    });
  }

  /**
   * resolves when this run's silence is confirmed as a hang and its evidence is in (never, if it is
   * not): a stop may come now
   */
  stallConfirmed(): Promise<CurrentSilence> {
    if (this.confirmed !== null) return Promise.resolve(this.confirmed);
    return new Promise((r) => this.waiters.push(r));
  }

  sampleHotFrames(count: number): string {
    if (this.hot?.running) return 'already sampling';
    const ranks = this.rankPidList();
    if (ranks.length === 0) return 'the trainer has not started yet: no pid';
    this.hot = new HotFrameSampling(this.sampler, this.model.evidence, ranks, count, this.onChange);
    void this.hot.run();
    return `sampling ${count} stacks of ${ranks.length} rank(s), 1.5 s apart`;
  }

  /** a new stack dump was asked for: the pane shows the newest thing asked for */
  dropFinishedHotFrames(): void {
    if (!this.hot?.running) this.hot = null;
  }

  hotFrames(): HotFramesView | null {
    return this.hot?.view() ?? null;
  }

  stop(): void {
    this.teardown.stop();
    this.stragglers.close();
    this.prober.stop();
    this.hot?.cancel();
    this.sampler.close();
  }

  /**
   * Before a stop signals the trainer: no new checks, every request in flight done, and the second
   * of the last filed dump's name over. A stop frees ranks blocked in a collective, which then answer
   * their pending SIGUSR1; dumps are named by the second, so such a late answer written in that same
   * second would overwrite the filed dump (the verdict would read one stack, `analyze` another).
   */
  async stopQuietly(): Promise<void> {
    this.stop();
    await this.stragglers.idle();
    await this.sampler.quiet();
  }

  /** stop, and resolve once every stack request in flight (and the teardown's records) is recorded */
  async settle(): Promise<void> {
    await this.teardown.settle({ cleanExit: this.run.exitCode === 0 });
    this.stop();
    return this.stragglers.idle().then(() => this.sampler.idle());
  }
}
