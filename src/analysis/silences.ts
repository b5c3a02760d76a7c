/**
 * Silences and what was found in them, read from the evidence: the detector says which ranks are
 * silent past their threshold (now, and in the past), the probe records and dumps taken during
 * each silence say whether it was stuck or slow (stall-judge.ts). Also the run's hot frames.
 */
import type { DumpEvent, Frame } from '../ingest/events.js';
import { IN_PYTHON_S } from '../ingest/stack-log-format.js';
import { mainThread, mainThreadTop } from '../ingest/stackdump.js';
import type { EvidenceState } from './evidence-state.js';
import { type RankIndex, rankIndex } from './rank-index.js';
import type { PastStallReport, SuspectReport } from './result.js';
import type { StallInfo } from './stall-detector.js';
import { cpuBusy, judgeSilence, type SampledFrame, type SilenceJudgement } from './stall-judge.js';
import { round2 } from './step-stats.js';
import { userFrame } from './user-frame.js';

export interface CurrentSilence extends StallInfo {
  /** whether its process burns CPU, as the checks found it (null when unknown) */
  cpuBusy: boolean | null;
  /** epoch seconds of the rank's last heartbeat */
  sinceTs: number;
  /** null when nsa-dbg did not check (a folder without its probe file): silence alone decides */
  judgement: SilenceJudgement | null;
}

/** The rank a dump belongs to: from the request that produced it, else the only rank there is. */
export function rankOfDump(s: EvidenceState, file: string): number | undefined {
  return rankIndex(s).rankOfFile.get(file);
}

/**
 * A rank's stack samples: where the main thread was (innermost frame, and the innermost of the
 * user's code), and whether it ran Python. nsa-dbg's stack hook answers from C also when the main
 * thread is in native code; such a dump is a frame, but says what an unanswered request says.
 */
function samplesOf(
  s: EvidenceState,
  index: RankIndex,
  rank: number,
  nowS: number,
  final: boolean,
): Array<SampledFrame & { file: string }> {
  const out: Array<SampledFrame & { file: string }> = [];
  for (const file of index.dumps.get(rank) ?? []) {
    const d = s.dumps.get(file);
    if (d?.ts === undefined) continue;
    const hook = d.file.includes('@');
    // the hook's Python handler has its second to answer (from the watcher's `seen` mark where the
    // hook writes one; not once the evidence is complete); no answer: native code
    const inPython =
      !hook ||
      d.inPython === true ||
      (!final && d.inPython === undefined && nowS <= (d.inPythonBy ?? d.ts + IN_PYTHON_S));
    const { top, user } = placeOf(d);
    out.push({ ts: d.ts, top, user, inPython, file: d.file });
  }
  return out;
}

/**
 * Where a dump's main thread was, read once per dump: every look at the silences judges every
 * silent rank from its dumps, several looks a second, and a dump never changes (a re-read of its
 * file is a new object).
 */
const places = new WeakMap<DumpEvent, { top: Frame | null; user: Frame | null }>();

function placeOf(d: DumpEvent): { top: Frame | null; user: Frame | null } {
  let p = places.get(d);
  if (p === undefined) {
    p = { top: mainThreadTop(d) ?? null, user: whereIn(d) };
    places.set(d, p);
  }
  return p;
}

function judge(
  s: EvidenceState,
  rank: number,
  sinceTs: number,
  nowS: number,
  thresholdS: number,
  final: boolean,
) {
  const index = rankIndex(s);
  const upTo = <T extends { ts: number }>(list: T[]) => list.filter((e) => e.ts <= nowS);
  const samples = upTo(samplesOf(s, index, rank, nowS, final));
  const native = new Set(samples.filter((d) => !d.inPython).map((d) => d.file));
  return judgeSilence(
    {
      sinceTs,
      nowS,
      thresholdS,
      procs: upTo(index.procs.get(rank) ?? []),
      dumps: samples,
      // a hook dump taken in native code answers the request as the trainer's handler could not;
      // the trainer's own dump asked for after a hook dump in Python is no evidence when it does
      // not come (the hook's dump already said where the main thread was)
      requests: upTo(
        (index.requests.get(rank) ?? []).filter(
          (r) => r.purpose !== 'user' && !(r.after !== undefined && r.file === undefined),
        ),
      ).map((r) =>
        r.outcome === 'faulthandler' && r.file !== undefined && native.has(r.file)
          ? { ...r, outcome: 'none-within-5s' as const }
          : r,
      ),
    },
    s.judge,
  );
}

/** busy as the judge counts it: runnable (R), or at least half a core */
function cpuBusyOf(j: SilenceJudgement | null): boolean | null {
  if (j === null || (j.evidence.cpuPct === null && j.evidence.procState === null)) return null;
  return cpuBusy(j.evidence.procState, j.evidence.cpuPct);
}

/** `final`: the evidence is complete (the run has ended): no answer still to come is waited for */
export function currentSilences(s: EvidenceState, nowS: number, final = false): CurrentSilence[] {
  return s.detector.stalls(nowS).map((st) => judged(s, st, nowS, final));
}

/**
 * One rank's silence now, judged (null: not silent). The checks of each silent rank ask about their
 * own: judging all 512 ranks to pick one, once per rank per round, took most of the engine's time
 * while a hang of 512 ranks was being concluded.
 */
export function currentSilenceOf(s: EvidenceState, rank: number, nowS: number): CurrentSilence | null {
  const st = s.detector.stallOf(rank, nowS);
  return st === null ? null : judged(s, st, nowS, false);
}

/** a silence as the detector sees it, with when it began; what it is, is not judged */
export type SilentRank = StallInfo & { sinceTs: number };

/**
 * The silent ranks now, not judged: what is cheap enough to ask several times a second (which ranks
 * a check is due for, whether any rank is silent at all). Judging is done per rank, when needed.
 */
export function silentRanks(s: EvidenceState, nowS: number): SilentRank[] {
  return s.detector.stalls(nowS).map((st) => ({ ...st, sinceTs: sinceOf(s, st, nowS) }));
}

function sinceOf(s: EvidenceState, st: StallInfo, nowS: number): number {
  return s.detector.position(st.rank)?.lastTs ?? nowS - st.silenceS;
}

function judged(s: EvidenceState, st: StallInfo, nowS: number, final: boolean): CurrentSilence {
  const sinceTs = sinceOf(s, st, nowS);
  const judgement = s.probing ? judge(s, st.rank, sinceTs, nowS, st.thresholdS, final) : null;
  return { ...st, cpuBusy: cpuBusyOf(judgement), sinceTs, judgement };
}

/** Every silence that was checked and found busy (not stuck): past ones and the current ones. */
export function suspectsOf(s: EvidenceState, current: CurrentSilence[]): SuspectReport[] {
  if (!s.probing) return [];
  const past = s.detector.pastStalls().map((p) => ({
    ...p,
    judgement: judge(s, p.rank, p.declaredTs - p.thresholdS, p.resumedTs, p.thresholdS, true),
  }));
  return [...past, ...current].flatMap(({ rank, step, where, silenceS, judgement: j }) =>
    j?.state === 'busy'
      ? [{ rank, step, where, state: 'busy', silenceS: round2(silenceS), why: j.why, evidence: j.evidence }]
      : [],
  );
}

/**
 * The verdict's past stalls: silences that ended when the rank's records resumed. One the checks
 * had confirmed as a hang (stopped, spinning or asleep on one frame, blocked outside Python) carries
 * what they found (`state`, `why`, `evidence`): a SIGSTOP undone by SIGCONT, a collective that
 * finally completed. It makes no verdict, but the run was hung for that long (src/analysis/recovered.ts
 * says it).
 */
export function pastStallReports(s: EvidenceState): PastStallReport[] {
  return s.detector.pastStalls().map((p) => {
    const r: PastStallReport = {
      rank: p.rank,
      step: p.step,
      where: p.where,
      silenceS: round2(p.silenceS),
      thresholdS: round2(p.thresholdS),
      declaredTs: p.declaredTs,
      resumedTs: p.resumedTs,
    };
    const j = s.probing ? pastJudgement(s, p) : null;
    if (j?.hang && (j.state === 'stuck' || j.state === 'blocked-native'))
      Object.assign(r, { state: j.state, why: j.why, evidence: j.evidence });
    return r;
  });
}

/**
 * A past stall as the checks found it: a hang if it was one at any check before the rank spoke
 * again. Judged at the resumption alone, a /proc reading taken just after a SIGCONT but stamped
 * before the rank's next record (a loaded box: seen on CI) read the process as running, and a hang
 * shown on screen for seconds was forgotten. So the resumption first, then each check before it,
 * newest first, until one says hang.
 */
const PAST_CHECKS = 8;

function pastJudgement(
  s: EvidenceState,
  p: { rank: number; declaredTs: number; resumedTs: number; thresholdS: number },
) {
  const since = p.declaredTs - p.thresholdS;
  const at = judge(s, p.rank, since, p.resumedTs, p.thresholdS, true);
  if (at.hang) return at;
  const checks = (rankIndex(s).procs.get(p.rank) ?? [])
    .map((r) => r.ts)
    .filter((ts) => ts > since && ts < p.resumedTs)
    .sort((a, b) => b - a)
    // (the few newest: the cost stays flat however long the stall was; the race is at its end)
    .slice(0, PAST_CHECKS);
  for (const ts of checks) {
    const j = judge(s, p.rank, since, ts, p.thresholdS, true);
    if (j.hang) return j;
  }
  return at;
}

export interface HotFrame extends Frame {
  /** samples whose innermost user frame was in this function (any line of it) */
  count: number;
  /** the lines within the function, hottest first; `line` above is the first of them */
  lines: Array<{ line: number; count: number }>;
}

/** Where the program was in each dump (innermost user frame below the handler). */
export function whereIn(d: DumpEvent): Frame | null {
  const top = mainThreadTop(d) ?? null;
  const frames = mainThread(d)?.frames ?? [];
  const upTo = top ? frames.lastIndexOf(top) : frames.length - 1;
  return userFrame(frames.slice(0, upTo + 1));
}

/**
 * Every dump of the run aggregated: a poor man's profiler of where the time goes. One row per
 * function (by file), not per line: a kernel whose samples land on four of its lines is one hot
 * function at 40 %, not four rows of 10 %; the lines stay as the detail.
 */
export function hotFramesOf(dumps: Iterable<DumpEvent>): HotFrame[] {
  const groups = new Map<string, Omit<HotFrame, 'line' | 'lines'> & { lines: Map<number, number> }>();
  for (const d of dumps) {
    const f = whereIn(d);
    if (f === null) continue;
    const key = `${f.file}\0${f.function}`;
    let g = groups.get(key);
    if (g === undefined) {
      g = { function: f.function, file: f.file, count: 0, lines: new Map() };
      groups.set(key, g);
    }
    g.count++;
    g.lines.set(f.line, (g.lines.get(f.line) ?? 0) + 1);
  }
  return [...groups.values()]
    .map((g) => {
      const lines = [...g.lines]
        .map(([line, count]) => ({ line, count }))
        .sort((a, b) => b.count - a.count || a.line - b.line);
      return { function: g.function, file: g.file, line: lines[0]!.line, count: g.count, lines };
    })
    .sort((a, b) => b.count - a.count || a.file.localeCompare(b.file) || a.line - b.line);
}
