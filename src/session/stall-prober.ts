/**
 * Checks silent ranks on the box before anything is called a hang. While a rank is suspect it takes
 * process facts (state, CPU %, wchan) and stack samples ≥ 1.5 s apart (nsa-vibe names dumps by the
 * whole second, so two in one second overwrite each other): three quickly, then one every 5 s.
 * Once the rank is found busy it backs off (the next check when the silence has doubled), and once
 * a hang is confirmed it stops. Everything it learns goes to the run's probe file, which the
 * evidence reads like any other file; the verdict is the evidence's, never this class's.
 */
import type { ProcState } from '../ingest/events.js';
import { ProcBatcher, type ProcReadingWithSignals, readProcMany } from '../runs/proc-batch.js';
import { cpuPctBetween } from '../runs/proc-facts.js';
import type { StackSampler } from '../runs/stack-sampler.js';
import type { Target } from '../targets/target.js';
import type { LiveModel } from './live-model.js';

const QUICK_SAMPLES = 3;
/** checks fall due on this grid (the prober ticks every 250 ms while a rank is silent) */
const ROUND_MS = 500;
const QUICK_GAP_MS = 1500;
const SLOW_GAP_MS = 5000;
/** how long the silences of a settled hang go unchecked (the stop comes well within it) */
const SETTLED_HOLD_MS = 30_000;
/** the second reading that gives a first CPU % */
const CPU_WINDOW_MS = 500;

interface Episode {
  sinceTs: number;
  /** the silence's threshold when it became suspect (the spin window is twice it) */
  thresholdS: number;
  /** when the first stack of this silence was asked for */
  firstAtMs: number | null;
  samples: number;
  nextAtMs: number;
  inFlight: boolean;
  /** when a dump request went unanswered (trainer clock): no more signals until a dump shows up */
  unansweredAtS: number | null;
  /** a settled verdict holds this silence: not checked before then (settle) */
  heldUntilMs?: number;
}

export interface StallProberOptions {
  target: Target;
  model: LiveModel;
  sampler: StackSampler;
  /** the trainer pid of a rank (from its heartbeats, else the run's own pid for rank 0) */
  pidOf: (rank: number) => number | undefined;
}

export class StallProber {
  private readonly episodes = new Map<number, Episode>();
  private readonly cpu = new Map<number, { ticks: number | null; atMs: number }>();
  private stopped = false;
  /** every silent rank's /proc in one command per node per round */
  private readonly procs: ProcBatcher;

  constructor(private readonly o: StallProberOptions) {
    this.procs = new ProcBatcher(o.target);
  }

  /** called often (every few hundred ms); does work only when a check is due */
  tick(): void {
    if (this.stopped) return;
    const now = Date.now();
    // which ranks are silent is cheap to know; what a silence is, is judged only for a rank whose
    // check is due (judging all 512 four times a second took seconds of the engine's time)
    const silent = this.o.model.silentRanks(now);
    const silentSet = new Set(silent.map((c) => c.rank));
    for (const rank of this.episodes.keys()) if (!silentSet.has(rank)) this.episodes.delete(rank);
    for (const c of silent) {
      let ep = this.episodes.get(c.rank);
      if (ep === undefined || ep.sinceTs !== c.sinceTs) {
        ep = {
          sinceTs: c.sinceTs,
          thresholdS: c.thresholdS,
          samples: 0,
          firstAtMs: null,
          nextAtMs: now,
          inFlight: false,
          unansweredAtS: null,
        };
        this.episodes.set(c.rank, ep);
      }
      if (ep.inFlight || now < ep.nextAtMs || now < (ep.heldUntilMs ?? 0)) continue;
      // confirmed: nothing more to learn
      if (this.o.model.silenceOf(c.rank, now)?.judgement?.hang) continue;
      const pid = this.o.pidOf(c.rank);
      if (pid === undefined) continue;
      const episode = ep;
      episode.inFlight = true;
      void this.probe(c.rank, pid, episode).finally(() => {
        episode.inFlight = false;
      });
    }
  }

  stop(): void {
    this.stopped = true;
  }

  /**
   * The silences now current are settled (a hang's verdict has all it needs): none of them is
   * checked again for a while, so no new round of hundreds of ranks goes out before the stop (at
   * 512 ranks on 2 cores a round in flight held it back by up to 23 s). A dashboard that keeps the
   * hung run open sees them checked again after SETTLED_HOLD_MS; a later silence of any rank (once
   * it spoke again) is checked as ever.
   */
  settle(): void {
    this.hold(this.episodes.keys());
  }

  /**
   * These ranks' silences are not checked for a while (SETTLED_HOLD_MS): at a confirmed hang, the
   * ranks whose stacks already say they wait for the culprit. Another sample of them tells nothing
   * the verdict needs, and on many ranks it is a round that wakes every one of them: at 512
   * simulated ranks on 2 cores each round stalled the engine 1–4 s while the culprit was judged.
   */
  hold(ranks: Iterable<number>): void {
    const until = Date.now() + SETTLED_HOLD_MS;
    for (const rank of ranks) {
      const ep = this.episodes.get(rank);
      if (ep !== undefined) ep.heldUntilMs = until;
    }
  }

  /**
   * One more record of process facts, now: a hang confirmed by the clock alone (a native call past
   * maxStepS) must be visible in the evidence too, so `analyze` of the folder reaches the same verdict.
   */
  async recordNow(rank: number): Promise<void> {
    const pid = this.o.pidOf(rank);
    // its own read, not one more in the round's batch: behind a round of 511 silent ranks' reads in
    // flight that took 16 s at 512 simulated ranks on 2 cores, and the stop waits for this record
    if (pid !== undefined) await this.recordFacts(rank, pid, true);
  }

  private async recordFacts(rank: number, pid: number, alone = false) {
    const facts = await this.facts(pid, alone);
    await this.o.sampler.record({
      kind: 'proc',
      ts: this.o.model.trainerNowS(Date.now()),
      rank,
      pid,
      state: facts?.state ?? null,
      cpuPct: facts?.cpuPct ?? null,
      ...(facts?.wchan ? { wchan: facts.wchan } : {}),
    });
    return facts;
  }

  private async probe(rank: number, pid: number, ep: Episode): Promise<void> {
    const facts = await this.recordFacts(rank, pid);
    // the spacing counts from the stack request (nsa-vibe names dumps by the second)
    const started = Date.now();
    if (this.stopped) return;
    // a stopped or exiting process cannot run its handler: the facts say enough
    const quiet = facts === null || facts.state === 'T' || facts.state === 't' || facts.state === 'Z';
    if (ep.unansweredAtS !== null && this.dumpSince(ep.unansweredAtS)) ep.unansweredAtS = null;
    if (!quiet && ep.unansweredAtS === null && !this.stopped) {
      ep.firstAtMs ??= started;
      // the facts just read serve the request too: one /proc round per node, not two
      const req = await this.o.sampler.request(rank, pid, 'suspect', { facts: facts?.reading ?? null });
      if (req.outcome === 'none-within-5s' || req.outcome === 'no-handler') ep.unansweredAtS = req.ts;
      ep.samples++;
    }
    const j = this.o.model.silenceOf(rank, Date.now())?.judgement;
    const silenceMs = (this.o.model.trainerNowS(Date.now()) - ep.sinceTs) * 1000;
    // busy: look again when the silence has doubled; otherwise keep sampling
    const gap =
      j?.state === 'busy'
        ? Math.max(SLOW_GAP_MS, silenceMs)
        : ep.samples < QUICK_SAMPLES && ep.unansweredAtS === null
          ? QUICK_GAP_MS
          : this.untilSpinWindow(ep, started);
    // on a grid of rounds: ranks that fell silent together are checked together (one /proc read
    // and one signal command per node a round), not each on its own schedule a few ms apart
    ep.nextAtMs = Math.ceil((started + gap) / ROUND_MS) * ROUND_MS;
  }

  /**
   * A spinning rank is stuck once its samples agree over max(2 × threshold, spinConfirmS): take the
   * next sample when that window closes (not up to 5 s later), and every 5 s otherwise.
   */
  private untilSpinWindow(ep: Episode, nowMs: number): number {
    if (ep.firstAtMs === null || ep.unansweredAtS !== null) return SLOW_GAP_MS;
    const needMs = Math.max(2 * ep.thresholdS, this.o.model.evidence.judgeSettings.spinConfirmS) * 1000;
    const left = ep.firstAtMs + needMs + 100 - nowMs;
    return left > 0 ? Math.min(SLOW_GAP_MS, Math.max(QUICK_GAP_MS, left)) : SLOW_GAP_MS;
  }

  /** a dump written after an unanswered request: the handler ran at last, so ask again */
  private dumpSince(ts: number): boolean {
    return this.o.model.evidence.dumpEvents().some((d) => (d.ts ?? 0) >= ts);
  }

  private async facts(
    pid: number,
    alone = false,
  ): Promise<{
    state: ProcState | null;
    cpuPct: number | null;
    wchan: string;
    /** the reading itself (with the caught signals), handed to the stack request */
    reading: ProcReadingWithSignals;
  } | null> {
    const read = async () => {
      const r = alone
        ? ((await readProcMany(this.o.target, [pid]).catch(() => null))?.get(pid) ?? null)
        : await this.procs.read(pid);
      return r === null ? null : { ...r, atMs: Date.now() };
    };
    let cur = await read();
    if (cur === null) return null;
    let prev = this.cpu.get(pid);
    if (prev === undefined) {
      prev = cur;
      await new Promise((r) => setTimeout(r, CPU_WINDOW_MS));
      cur = (await read()) ?? cur;
    }
    this.cpu.set(pid, { ticks: cur.ticks, atMs: cur.atMs });
    return { state: cur.state, cpuPct: cpuPctBetween(prev, cur), wchan: cur.wchan, reading: cur };
  }
}
