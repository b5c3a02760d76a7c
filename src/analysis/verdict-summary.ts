/**
 * The verdict in words: its one-line summary (verdict.ts decides it), with what the run's ending
 * adds whatever the verdict: a hang that recovered, the teardown snapshot, the ranks' last words.
 */
import { rankSetText } from '../util/rank-set.js';
import type { EvidenceState } from './evidence-state.js';
import { lastWordsSummary } from './last-words.js';
import { recoveredSummary } from './recovered.js';
import type { AnalysisResult, StallReport } from './result.js';
import { rateSummary } from './run-rates.js';
import { oomKillsOf, teardownSummary } from './teardown.js';

/** the summary of a result decided from `s`: its verdict's line, then the run's ending */
export function summaryOf(s: EvidenceState, result: AnalysisResult): string {
  const { verdict, crash } = result;
  // a hang that recovered is said whatever the verdict: the run was hung for that long
  const recovered = recoveredSummary(result.pastStalls);
  // where the other ranks were when a signal ended them (torchrun stopping them after a crash)
  const torchrun = s.torchrunFailed.length > 0 || s.tracebacks.some((t) => t.ev.torchrun !== undefined);
  // the crashed rank's own stop says nothing new (a launcher's failure names no rank of its own)
  const crashRank = verdict === 'crash' && crash?.basis !== 'launcher-error' ? crash?.rank : undefined;
  const sigkilled = s.torchrunFailed.filter((f) => f.exitCode === -9).map((f) => f.rank);
  const words = lastWordsSummary(
    result.lastWords,
    torchrun,
    crashRank,
    sigkilled,
    oomKillsOf(s),
    s.slurmCancel,
  );
  // what the kernel saw of the living ranks at the first sign of teardown, before their last words
  // (a run that passed or that nsa-dbg stopped: ranks ending one after another is no teardown)
  const seen =
    verdict === 'pass' || verdict === 'stopped' ? '' : teardownSummary(result.teardown ?? null, crashRank);
  return `${summarize(result)}${recovered ? `; ${recovered}` : ''}${seen ? `; ${seen}` : ''}${words ? `; ${words}` : ''}`;
}

export function summarize(r: AnalysisResult): string {
  const every = r.stepFormat?.every ?? 1;
  const stepOf = (p: { step: number; afterStep?: number }) =>
    p.afterStep === undefined ? `step ${p.step}` : `after step ${p.afterStep} (logged every ${every})`;
  /** "at step 6 (in-step), rank 0", or "after step 30 (logged every 10) (in-step), rank 0" */
  const at = (p: StallReport) =>
    `${p.afterStep === undefined ? 'at ' : ''}${stepOf(p)} (${p.where}), rank ${p.rank}${p.node ? ` on ${p.node}` : ''}`;
  switch (r.verdict) {
    case 'nan': {
      const ex =
        r.lossExplosion && r.nan && r.lossExplosion.step < r.nan.step
          ? `, loss exploded at step ${r.lossExplosion.step}`
          : '';
      return `nan at step ${r.nan?.step ?? '?'}, rank ${r.nan?.rank ?? 0}${ex}`;
    }
    case 'crash': {
      const c = r.crash;
      if (c === null) return `crash (exit ${r.exitCode ?? '?'})`;
      const where = c.frame ? ` in ${c.frame.function} (${c.frame.file}:${c.frame.line})` : '';
      if (c.basis === 'launcher-error')
        return `the launcher failed before any worker trained: ${c.exception}: ${c.message.split('\n')[0]}${where} (not a training crash)`;
      const who =
        c.ranks && c.ranks.length > 1
          ? rankSetText(c.ranks)
          : `rank ${c.rank}${c.node ? ` on ${c.node}` : ''}`;
      const tr =
        c.torchrunRootCause !== undefined && c.torchrunRootCause !== c.rank
          ? ` (torchrun's first observed failure: rank ${c.torchrunRootCause})`
          : '';
      return `crash ${c.afterStep === undefined ? 'at ' : ''}${stepOf(c)}, ${who}: ${c.exception}${c.message ? `: ${c.message.split('\n')[0]}` : ''}${where}${tr}`;
    }
    case 'hang': {
      const fr = r.flightRecorder?.[0];
      const missed = fr
        ? `${rankSetText(fr.ranks)} never entered ${fr.op} #${fr.seq} (${fr.pg}) that ${rankSetText(fr.waiting)} waited in${fr.frame ? ` (${fr.frame.function} ${fr.frame.file}:${fr.frame.line})` : ''}, from the Flight Recorder`
        : '';
      if (!r.stall) return missed ? `hang: ${missed}` : 'hang';
      const how = r.stall.state ? ` — ${r.stall.state}: ${r.stall.why ?? ''}` : '';
      const rc = r.stall.rootCause ? `; rank ${r.stall.rootCause.rank} ${r.stall.rootCause.why}` : '';
      return `hang ${at(r.stall)}${how}${rc}`;
    }
    case 'incomplete': {
      const killed = r.killed ? `killed (exit ${r.exitCode}) ` : '';
      const pos = r.lastPosition ? `, evidence stops ${at(r.lastPosition)}` : '';
      return `incomplete: ${killed}after step ${r.stepsReached}${pos}`;
    }
    case 'stopped':
      return `stopped after step ${r.stepsReached}`;
    case 'slow': {
      const busy = r.suspects.length
        ? `${r.suspects.length} silence${r.suspects.length === 1 ? '' : 's'} checked and found busy (step${r.suspects.length === 1 ? '' : 's'} ${r.suspects.map((x) => x.step).join(', ')}), `
        : '';
      return `slow: ${r.stepsReached} steps, ${busy}${r.slowSteps.length} slow step${r.slowSteps.length === 1 ? '' : 's'}, ${rateSummary(r.throughput)}`;
    }
    default:
      return `pass: ${r.stepsReached} steps, ${rateSummary(r.throughput)}`;
  }
}
