/**
 * Stuck or slow: silence past the detector's threshold only makes a rank *suspect*. This decides,
 * from the facts nsa-dbg took on the box during that silence (process state and CPU from /proc,
 * stack dumps at least 1.5 s apart, dump requests that were never answered), whether the rank is
 *
 *   busy            frames move between samples, or the CPU is busy while the main thread is in
 *                   native code (a long backward or kernel): the run keeps going;
 *   stuck           stopped (T), or spinning on the same frame, for max(2 × threshold, spinConfirmS);
 *                   or sleeping near 0 % CPU with the same innermost frame in three samples;
 *   blocked-native  a dump request got no answer within 5 s (the main thread is outside Python):
 *                   a hang only once the CPU stays idle, or past the lane's hard ceiling maxStepS;
 *   checking        not enough evidence yet; past maxStepS it is stuck whatever is missing.
 *
 * Pure: the same inputs give the same answer live and in `analyze`.
 */
import type { DumpRequestEvent, Frame, ProcProbeEvent, ProcState } from '../ingest/events.js';

export interface JudgeSettings {
  /** spinning on one frame must last at least max(2 × threshold, this) to be called stuck */
  spinConfirmS: number;
  /** a CPU-busy native call is busy until the silence passes this (the NCCL watchdog's order) */
  maxStepS: number;
}

export const DEFAULT_JUDGE: JudgeSettings = { spinConfirmS: 30, maxStepS: 1800 };

/** CPU use at or above this is busy; below IDLE_PCT is idle (between: neither) */
const BUSY_PCT = 50;
const IDLE_PCT = 10;
/** identical samples a sleeping rank needs before it is called stuck */
const SLEEP_SAMPLES = 3;

export type SilenceState = 'checking' | 'busy' | 'stuck' | 'blocked-native';

export interface StallEvidence {
  procState: ProcState | null;
  cpuPct: number | null;
  wchan: string | null;
  /** stack samples taken during the silence */
  samples: number;
  framesMoved: boolean;
}

export interface SilenceJudgement {
  state: SilenceState;
  /** confirmed: this silence is a hang */
  hang: boolean;
  /** one line for the banner: why this state */
  why: string;
  evidence: StallEvidence;
  /** the innermost frame the samples agree on (or the newest one) */
  frame: Frame | null;
}

export interface SampledFrame {
  ts: number;
  /** innermost main-thread frame below the dump handler */
  top: Frame | null;
  /** the innermost frame of the user's code (what a report names); default: top */
  user?: Frame | null;
  /**
   * the main thread ran Python (a Python handler could run): default true. A dump taken from C
   * while it sat in native code has a frame, but answers nothing about Python.
   */
  inPython?: boolean;
}

export interface SilenceInput {
  /** the rank's last heartbeat, where the silence starts */
  sinceTs: number;
  nowS: number;
  thresholdS: number;
  procs: ProcProbeEvent[];
  dumps: SampledFrame[];
  requests: DumpRequestEvent[];
}

const frameKey = (f: Frame | null) => (f === null ? '?' : `${f.file}:${f.line}:${f.function}`);
/**
 * Lines of one function this close together are one place: a tight loop (`while True: pass` is
 * two lines) samples on either line, and that is not moving on.
 */
const LOOP_LINES = 3;

/** whether samples show the main thread moving on: another function, or far within one */
function moved(frames: Array<Frame | null>): boolean {
  const known = frames.filter((f): f is Frame => f !== null);
  if (known.length < frames.length && known.length > 0) return true;
  const places = new Set(known.map((f) => `${f.file}:${f.function}`));
  if (places.size > 1) return true;
  const lines = known.map((f) => f.line);
  return lines.length > 0 && Math.max(...lines) - Math.min(...lines) >= LOOP_LINES;
}
const fmt = (f: Frame | null) => (f === null ? '?' : `${f.function} (${f.file}:${f.line})`);

/**
 * Whether a process burns CPU. Runnable (R) wants the CPU: on a box shared with other work a
 * spinning rank may get less than half a core, and it is still busy.
 */
export function cpuBusy(state: ProcState | null, cpuPct: number | null): boolean {
  return state === 'R' || (cpuPct !== null && cpuPct >= BUSY_PCT);
}

export function judgeSilence(i: SilenceInput, settings: JudgeSettings = DEFAULT_JUDGE): SilenceJudgement {
  const j = judgeEvidence(i, settings);
  // the lane's hard ceiling holds whatever the checks could not tell (no /proc, no stack at all):
  // a silence that is still "checking" past maxStepS is a hang, so no run waits forever
  const silence = i.nowS - i.sinceTs;
  if (j.state === 'checking' && silence > settings.maxStepS)
    return {
      ...j,
      state: 'stuck',
      hang: true,
      why: `silent for ${Math.round(silence)} s > maxStepS ${settings.maxStepS} s (${j.why})`,
    };
  return j;
}

/**
 * A rank answering one of our stack requests runs our handler: a /proc reading taken from the
 * signal until a little after the answer was seen says R (or t, under py-spy) because we asked.
 * Such a reading is no fact about the rank: one taken at the moment a hang was confirmed, while the
 * culprit wrote the dump asked of it, once turned "sleeping, 3 identical samples" into "same frame
 * for 8 s of 30 s", and the hang into no verdict at all.
 */
const ANSWER_TAIL_S = 0.5;

function undisturbed(procs: ProcProbeEvent[], requests: DumpRequestEvent[]): ProcProbeEvent[] {
  const windows = requests
    .filter((r) => r.file !== undefined)
    .map((r) => [r.ts, (r.answeredTs ?? r.ts) + ANSWER_TAIL_S] as const);
  // a reading stamped at the request's own time was read before its signal went out (the prober
  // reads a rank's facts, then asks for its stack)
  return procs.filter((p) => !windows.some(([from, to]) => p.ts > from && p.ts <= to));
}

function judgeEvidence(i: SilenceInput, settings: JudgeSettings): SilenceJudgement {
  const procs = undisturbed(
    i.procs.filter((p) => p.ts >= i.sinceTs),
    i.requests,
  ).sort((a, b) => a.ts - b.ts);
  const all = i.dumps.filter((d) => d.ts >= i.sinceTs).sort((a, b) => a.ts - b.ts);
  // samples of the main thread running Python; the others (native code) only say where it sat
  const dumps = all.filter((d) => d.inPython !== false);
  const requests = i.requests.filter((r) => r.ts >= i.sinceTs).sort((a, b) => a.ts - b.ts);
  const last = procs[procs.length - 1];
  const cpuPct = [...procs].reverse().find((p) => p.cpuPct !== null)?.cpuPct ?? null;
  const distinct = new Set(dumps.map((d) => frameKey(d.top)));
  const evidence: StallEvidence = {
    procState: last?.state ?? null,
    cpuPct: cpuPct === null ? null : Math.round(cpuPct * 10) / 10,
    wchan: last?.wchan ?? null,
    samples: dumps.length,
    framesMoved: moved(dumps.map((d) => d.top)),
  };
  const newestSample = all[all.length - 1];
  const newest = newestSample === undefined ? null : (newestSample.user ?? newestSample.top);
  // a hang: stuck or blocked outside Python (busy and checking are none yet)
  const out = (state: SilenceState, why: string): SilenceJudgement => ({
    state,
    hang: state === 'stuck' || state === 'blocked-native',
    why,
    evidence,
    frame: newest,
  });
  const silence = i.nowS - i.sinceTs;
  const state = last?.state ?? null;
  // stopped or spinning must last this long to be stuck
  const need = Math.max(2 * i.thresholdS, settings.spinConfirmS);

  if (state === 'T' || state === 't') {
    // stopped is reversible (a debugger, Ctrl+Z, a SIGSTOP someone will undo): a hang once it has
    // stayed stopped as long as a spin must last to be one
    let first = procs.length - 1;
    while (first > 0 && (procs[first - 1]!.state === 'T' || procs[first - 1]!.state === 't')) first--;
    const span = last!.ts - procs[first]!.ts;
    if (span >= need) return out('stuck', `process stopped (state T) for ${Math.round(span)} s`);
    return out('checking', `process stopped (state T) for ${Math.round(span)} s of ${Math.round(need)} s`);
  }
  if (state === 'Z' || state === 'X') return out('checking', 'process exiting');
  if (evidence.framesMoved) {
    const hot = [...distinct].slice(-2).join(' → ');
    return out('busy', `busy, not stuck: frames move (${hot.replace(/:(\d+):/g, ':$1 ')})`);
  }

  const busy = cpuBusy(state, cpuPct);
  // idle needs the newest two readings idle (or the only one, if the process was read once)
  const idleReadings = procs.filter((p) => p.cpuPct !== null).slice(-2);
  const idle =
    idleReadings.length > 0 && idleReadings.every((p) => (p.cpuPct ?? 100) < IDLE_PCT && p.state !== 'R');
  // the main thread is outside Python: the newest request got no dump, and none came after it
  const lastReq = requests[requests.length - 1];
  const silentReq = (r: DumpRequestEvent) => r.outcome === 'none-within-5s' || r.outcome === 'no-handler';
  const unanswered = lastReq !== undefined && silentReq(lastReq) && !dumps.some((d) => d.ts >= lastReq.ts);
  const cpuText = cpuPct === null ? 'CPU unknown' : `CPU ${Math.round(cpuPct)}%`;

  if (unanswered) {
    const native = newestSample !== undefined && newestSample.inPython === false;
    const what =
      lastReq.outcome === 'no-handler'
        ? 'no stack can be taken (no SIGUSR1 handler, no py-spy)'
        : native
          ? `main thread in native code, in ${fmt(newest)}`
          : 'no dump within 5 s: main thread outside Python';
    // outside Python since the first of the trailing unanswered requests (asking again does not
    // restart the wait: on many ranks a rank is asked again whenever another rank dumps)
    let first = requests.length - 1;
    while (
      first > 0 &&
      silentReq(requests[first - 1]!) &&
      !dumps.some((d) => d.ts >= requests[first - 1]!.ts)
    )
      first--;
    if (idle && procs.filter((p) => p.ts >= requests[first]!.ts).length >= 2)
      return out('blocked-native', `${what}, ${cpuText}, ${state ?? '?'} in ${evidence.wchan || '?'}`);
    if (silence > settings.maxStepS)
      return out('blocked-native', `${what} for ${Math.round(silence)} s > maxStepS ${settings.maxStepS} s`);
    if (busy) return out('busy', `busy, not stuck: ${what}, ${cpuText} (native op)`);
    return out('checking', `${what}, ${cpuText}`);
  }

  // a request that went unanswered for 5 s and was answered later, while the CPU was busy: the main
  // thread sat in a long native op (autograd backward, a kernel) and came back: busy, not stuck
  const late = requests.find(
    (r) =>
      r.outcome === 'none-within-5s' &&
      dumps.some((d) => d.ts >= r.ts) &&
      procs.some((p) => p.ts >= r.ts && cpuBusy(p.state, p.cpuPct)),
  );
  if (late !== undefined) {
    const back = dumps.find((d) => d.ts >= late.ts)!;
    // the stack hook's dump from C while it sat there says where (absent without the hook)
    const inNative = all.find((d) => d.inPython === false && d.ts >= late.ts && d.ts <= back.ts);
    const where =
      inNative === undefined ? 'outside Python' : `in native code, in ${fmt(inNative.user ?? inNative.top)},`;
    return out(
      'busy',
      `busy, not stuck: main thread ${where} for ${Math.round(back.ts - late.ts)} s (a native op), ${cpuText}, then back in ${fmt(back.top)}`,
    );
  }

  if (dumps.length > 0 && idle && dumps.length >= SLEEP_SAMPLES)
    return out(
      'stuck',
      `sleeping (${state ?? '?'}, ${cpuText}) in ${fmt(newest)}, ${dumps.length} identical samples`,
    );
  if (dumps.length >= 2 && busy) {
    const span = dumps[dumps.length - 1]!.ts - dumps[0]!.ts;
    if (span >= need)
      return out('stuck', `spinning (${cpuText}) on ${fmt(newest)} for ${Math.round(span)} s`);
    return out(
      'checking',
      `same frame ${fmt(newest)} for ${Math.round(span)} s of ${Math.round(need)} s, ${cpuText}`,
    );
  }
  if (procs.length === 0 && requests.length === 0 && dumps.length === 0)
    return out('checking', 'taking process facts and stacks');
  return out('checking', `${dumps.length} sample(s), ${cpuText}`);
}
