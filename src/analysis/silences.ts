/**
 * Silences and what was found in them, read from the evidence: the detector says which ranks are
 * silent past their threshold (now, and in the past), the probe records and dumps taken during
 * each silence say whether it was stuck or slow (stall-judge.ts). Also the run's hot frames.
 */
import type { DumpEvent, Frame } from '../ingest/events.js';
import { mainThread, mainThreadTop } from '../ingest/stackdump.js';
import type { EvidenceState } from './evidence-state.js';
import type { SuspectReport } from './result.js';
import type { StallInfo } from './stall-detector.js';
import { cpuBusy, judgeSilence, type SampledFrame, type SilenceJudgement } from './stall-judge.js';
import { userFrame } from './user-frame.js';

export interface CurrentSilence extends StallInfo {
  /** epoch seconds of the rank's last heartbeat */
  sinceTs: number;
  /** null when nsa-dbg did not check (a folder without its probe file): silence alone decides */
  judgement: SilenceJudgement | null;
}

/** The rank a dump belongs to: from the request that produced it, else the only rank there is. */
export function rankOfDump(s: EvidenceState, file: string): number | undefined {
  for (let i = s.dumpRequests.length - 1; i >= 0; i--) {
    const r = s.dumpRequests[i]!;
    if (r.file === file) return r.rank;
  }
  return s.ranks.size <= 1 ? ([...s.ranks][0] ?? 0) : undefined;
}

function samplesOf(s: EvidenceState, rank: number): SampledFrame[] {
  const out: SampledFrame[] = [];
  for (const d of s.dumps.values()) {
    if (d.ts === undefined || rankOfDump(s, d.file) !== rank) continue;
    out.push({ ts: d.ts, top: mainThreadTop(d) ?? null });
  }
  return out;
}

function judge(s: EvidenceState, rank: number, sinceTs: number, nowS: number, thresholdS: number) {
  const upTo = <T extends { ts: number }>(list: T[]) => list.filter((e) => e.ts <= nowS);
  return judgeSilence(
    {
      sinceTs,
      nowS,
      thresholdS,
      procs: upTo(s.procProbes.filter((p) => p.rank === rank)),
      dumps: upTo(samplesOf(s, rank)),
      requests: upTo(s.dumpRequests.filter((r) => r.rank === rank && r.purpose !== 'user')),
    },
    s.judge,
  );
}

/** busy as the judge counts it: runnable (R), or at least half a core */
function cpuBusyOf(j: SilenceJudgement | null, fallback: boolean | null): boolean | null {
  if (j === null || (j.evidence.cpuPct === null && j.evidence.procState === null)) return fallback;
  return cpuBusy(j.evidence.procState, j.evidence.cpuPct);
}

export function currentSilences(s: EvidenceState, nowS: number): CurrentSilence[] {
  return s.detector.stalls(nowS).map((st) => {
    const sinceTs = s.detector.position(st.rank)?.lastTs ?? nowS - st.silenceS;
    const judgement = s.probing ? judge(s, st.rank, sinceTs, nowS, st.thresholdS) : null;
    return { ...st, sinceTs, judgement, cpuBusy: cpuBusyOf(judgement, st.cpuBusy) };
  });
}

/** Every silence that was checked and found busy (not stuck): past ones and the current ones. */
export function suspectsOf(s: EvidenceState, current: CurrentSilence[]): SuspectReport[] {
  const out: SuspectReport[] = [];
  if (!s.probing) return out;
  for (const p of s.detector.pastStalls()) {
    const since = p.declaredTs - p.thresholdS;
    const j = judge(s, p.rank, since, p.resumedTs, p.thresholdS);
    if (j.state !== 'busy') continue;
    out.push({
      rank: p.rank,
      step: p.step,
      where: p.where,
      state: 'busy',
      silenceS: round2(p.silenceS),
      why: j.why,
      evidence: j.evidence,
    });
  }
  for (const c of current) {
    if (c.judgement?.state !== 'busy') continue;
    out.push({
      rank: c.rank,
      step: c.step,
      where: c.where,
      state: 'busy',
      silenceS: round2(c.silenceS),
      why: c.judgement.why,
      evidence: c.judgement.evidence,
    });
  }
  return out;
}

export interface HotFrame extends Frame {
  count: number;
}

/** Where the program was in each dump (innermost user frame below the handler). */
export function whereIn(d: DumpEvent): Frame | null {
  const top = mainThreadTop(d) ?? null;
  const frames = mainThread(d)?.frames ?? [];
  const upTo = top ? frames.lastIndexOf(top) : frames.length - 1;
  return userFrame(frames.slice(0, upTo + 1));
}

/** Every dump of the run aggregated: a poor man's profiler of where the time goes. */
export function hotFramesOf(dumps: Iterable<DumpEvent>): HotFrame[] {
  const counts = new Map<string, HotFrame>();
  for (const d of dumps) {
    const f = whereIn(d);
    if (f === null) continue;
    const key = `${f.file}:${f.line}:${f.function}`;
    const cur = counts.get(key);
    if (cur !== undefined) cur.count++;
    else counts.set(key, { function: f.function, file: f.file, line: f.line, count: 1 });
  }
  return [...counts.values()].sort(
    (a, b) => b.count - a.count || a.file.localeCompare(b.file) || a.line - b.line,
  );
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}
