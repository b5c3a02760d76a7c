/**
 * Straggler sampling: while a run of several ranks trains, every rank's main-thread stack is taken
 * through nsa-dbg's stack hook, all ranks at the same moment, in rounds spread at random intervals
 * (never in step with the trainer's own period, which would always hit the same phase of a step).
 * Fast while the ranking is unsettled (a straggler must be named within ~20 steps), a few rounds a
 * minute once it is. The dumps land in each rank's stack log marked `sample`; the run-folder reader
 * classifies and counts them (src/ingest/stack-log.ts → the evidence's stackSamples), so `analyze`
 * of the folder ranks the same samples. Nothing is recorded per sample in the probe file.
 *
 * A sample never harms a rank: only a rank whose hook registered, whose process is alive and not
 * ending (state Z/X) or stopped (T), and whose SigCgt shows the hook's handler at that moment is
 * signalled (the default action of an unhandled SIGUSR2 kills). A hook whose watcher thread runs
 * takes samples on SIGURG instead (WorkerEvent.sampleSignal): the watcher writes the main thread's
 * frames in one write, where the stack signal's faulthandler dump costs the rank a system call per
 * piece of every frame (docs/stragglers.md); SIGURG's default action is to ignore it, so a late
 * one harms nothing either. Sampling pauses while any rank is
 * silent (the stall prober's samples and the hang's stacks are left alone) and ends with the run.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { SAMPLE_MARK } from '../ingest/stack-log-format.js';
import { type SignalAsk, signalPerNode } from '../runs/proc-batch.js';
import { catchesSignal } from '../runs/signals.js';
import { procIsLocal, type Target } from '../targets/target.js';
import type { LiveModel } from './live-model.js';

/**
 * mean gap between rounds' starts while the evidence is thin: ~16 samples a second per rank. A rank
 * doing 10 % more work is found waiting ~5 % of the time against ~15 % for the others (on a loaded
 * box the all_reduce itself takes a share), which takes ~150 samples of each to tell with
 * confidence: 20 steps of half a second (straggler.ts, docs/stragglers.md).
 */
const FAST_GAP_MS = 60;
/** rounds are at least this far apart per rank sampled (512 ranks: one round every 4 s) */
const ROUND_MS_PER_RANK = 8;
/** a round never starts sooner than this after the one before ended */
const MIN_GAP_MS = 10;
/** once settled: a few a minute */
const SLOW_GAP_MS = 20_000;
/** a pause (a silent rank, no ranks yet) is looked at again after this */
const IDLE_GAP_MS = 1000;
/** samples of every rank after which the ranking counts as settled, a straggler named or not */
const SETTLED_SAMPLES = 600;
/** a named straggler this sure settles the ranking sooner */
const SETTLED_CONFIDENCE = 0.99;

/**
 * $1 the request id, then (pid, stack log, signal) triples. One time stamp for the round (one
 * `date`, not one per rank); for each process, its /proc status is read by the shell itself (no
 * process started) right before its signal: alive, not ending (Z, X) nor stopped (T), and its
 * SigCgt's low 32 bits hold the signal's bit. Only then its log is marked and it is signalled, so
 * no time passes between the check and the signal for a handler to be taken down (an exiting
 * Python's faulthandler unregisters). Prints `skip PID` for a process passed over.
 */
const SAMPLE_SCRIPT = [
  'id=$1; shift; t=$(date +%s.%N 2>/dev/null)',
  'while [ $# -ge 3 ]; do',
  ' c=; s=',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: sh's ${v#…}, the low 32 bits of SigCgt
  ' if [ -r /proc/$1/status ]; then while read -r k v r; do case $k in State:) s=$v;; SigCgt:) c=${v#????????};; esac; done < /proc/$1/status; fi',
  ' case $s in Z|X|T|t|"") c=;; esac',
  ` if [ -n "$c" ] && [ $(( 0x$c >> ($3 - 1) & 1 )) = 1 ]; then printf "# request %s %s ${SAMPLE_MARK}\\n" "$id" "$t" >> "$2" && kill -s "$3" "$1"; else echo "skip $1"; fi`,
  ' shift 3',
  'done',
].join('\n');

/**
 * SAMPLE_SCRIPT's work on this machine, in this process: each process's status read right before its
 * signal (alive, not ending or stopped, the signal's bit in SigCgt), its log marked, then the
 * signal. Returns how many were passed over.
 */
function sampleHere(send: SignalAsk[], id: string): number {
  let skipped = 0;
  for (const s of send) {
    let status = '';
    try {
      status = readFileSync(`/proc/${s.pid}/status`, 'utf8');
    } catch {}
    const state = /^State:\s*(\S)/m.exec(status)?.[1] ?? '';
    const cgt = /^SigCgt:\s*([0-9a-fA-F]+)/m.exec(status)?.[1];
    if (cgt === undefined || 'ZXTt'.includes(state) || state === '' || !catchesSignal(cgt, s.signal)) {
      skipped++;
      continue;
    }
    try {
      appendFileSync(s.log, `# request ${id} ${(Date.now() / 1000).toFixed(6)} ${SAMPLE_MARK}\n`);
      process.kill(s.pid, s.signal);
    } catch {
      skipped++;
    }
  }
  return skipped;
}

export interface StragglerSamplingOptions {
  target: Target;
  model: LiveModel;
  /**
   * sample only in every other window of this many seconds, always at the fast rate (the bench:
   * step time with and without sampling in the same run, windows far longer than a step)
   */
  alternateS?: number;
}

/**
 * NSA_DBG_STRAGGLER_SAMPLING: `0` no sampling; `alternate:S` sampling on and off in turns of S
 * seconds (bench/straggler.ts); anything else, on
 */
export function samplingMode(v: string | undefined): { on: boolean; alternateS?: number } {
  if (v === '0') return { on: false };
  const m = /^alternate:(\d+(?:\.\d+)?)$/.exec(v ?? '');
  return m === null ? { on: true } : { on: true, alternateS: Number(m[1]) };
}

/**
 * Whether some rank has finished a step. A heartbeat at a step's start (`step_start`) names the
 * step under way, not one done: the first step (init, compile, every rank waiting for the last to
 * start) says nothing of who is slow, and at 256 ranks sampling it cost the start-up CPU.
 */
export function trainingUnderWay(ranks: ReadonlyArray<{ step: number; phase: string }>): boolean {
  return ranks.some((r) => r.step - (r.phase === 'step_start' ? 1 : 0) >= 1);
}

export class StragglerSampling {
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private started = false;
  /** a step was seen: training is under way */
  private training = false;
  /** the round under way (a stop waits for it: no signal goes out after the stop's own) */
  private inFlight: Promise<number> | null = null;
  /** rounds sent, and samples asked for (the bench and the tests read them) */
  rounds = 0;
  asked = 0;
  /** processes passed over: gone, ending, stopped, or their SigCgt lacked the hook's handler */
  unhandled = 0;

  constructor(private readonly o: StragglerSamplingOptions) {}

  /** when sampling started (the alternate windows count from it) */
  private startMs = 0;

  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.startMs = Date.now();
    this.schedule(IDLE_GAP_MS);
  }

  /** no more rounds (the run is stopping): a round under way sends nothing more */
  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** resolves once no round is under way */
  async idle(): Promise<void> {
    await this.inFlight;
  }

  /** `meanMs` after the start of the round that just ended (`startedMs`), less what it took */
  private schedule(meanMs: number, startedMs = Date.now()): void {
    if (this.closed) return;
    // uniform on [0.5, 1.5) × the mean: spread, and never locked to the trainer's step period
    const gap = meanMs * (0.5 + Math.random());
    const wait = Math.max(MIN_GAP_MS, startedMs + gap - Date.now());
    this.timer = setTimeout(() => {
      const started = Date.now();
      this.inFlight = this.round();
      void this.inFlight.then((next) => {
        this.inFlight = null;
        this.schedule(next, started);
      });
    }, wait);
    this.timer.unref?.();
  }

  /** the mean gap to the next round: fast while thin, slow once settled */
  private gapNow(): number {
    // the bench's windows measure the fast rate, the costliest, settled or not
    if (this.o.alternateS !== undefined) return FAST_GAP_MS;
    const list = this.o.model.evidence.stragglers();
    const fewest = list.length === 0 ? 0 : Math.min(...list.map((r) => r.samples));
    const settled =
      list.some((r) => r.named && r.confidence >= SETTLED_CONFIDENCE) || fewest >= SETTLED_SAMPLES;
    return settled ? SLOW_GAP_MS : FAST_GAP_MS;
  }

  private countSent(n: number, skipped: number): void {
    this.unhandled += skipped;
    this.asked += n - skipped;
  }

  /** one round; resolves to the mean gap before the next */
  private async round(): Promise<number> {
    if (this.closed) return IDLE_GAP_MS;
    const now = Date.now();
    // a silent rank is the stall prober's: its samples, and a hang's stacks, are not disturbed
    if (this.o.model.anySilent(now)) return IDLE_GAP_MS;
    const a = this.o.alternateS;
    if (a !== undefined && Math.floor((now - this.startMs) / (a * 1000)) % 2 === 1) return FAST_GAP_MS;
    const workers = [...this.o.model.evidence.workers()].filter(([, w]) => w.path !== '');
    if (workers.length < 2) return IDLE_GAP_MS;
    // training under way (a step done): init and the first compile say nothing of who is slow
    this.training ||= trainingUnderWay(this.o.model.ranks(now));
    if (!this.training) return IDLE_GAP_MS;
    // the signal is whole and low (the script checks the low 32 bits of SigCgt)
    const send: SignalAsk[] = workers
      .map(([, w]) => ({ pid: w.pid, log: w.path, signal: w.sampleSignal ?? w.signal }))
      .filter((w) => Number.isInteger(w.signal) && w.signal >= 1 && w.signal <= 32);
    if (send.length < 2) return IDLE_GAP_MS;
    const id = this.o.model.trainerNowS(Date.now()).toFixed(3);
    // this machine, one node: its /proc and its processes are a call away, no command needed
    if (procIsLocal(this.o.target)) this.countSent(send.length, sampleHere(send, id));
    // elsewhere one command per node, which says which processes it passed over
    else
      for (const r of await signalPerNode(this.o.target, SAMPLE_SCRIPT, id, send))
        if (r !== null) this.countSent(r.n, r.stdout.split('\n').filter((l) => l.startsWith('skip ')).length);
    this.rounds++;
    // a round signals every rank: past 8 ranks the rounds are spaced by the count (8 ms a rank), so
    // the signals a second, and the dumps nsa-dbg reads, stay bounded (~125 a second) at any size
    return Math.max(this.gapNow(), ROUND_MS_PER_RANK * send.length);
  }
}
