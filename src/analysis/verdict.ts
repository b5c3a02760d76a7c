/**
 * From collected evidence to a verdict. Order of precedence (the first that holds):
 *   nan      a non-finite loss (step line, heartbeat, FATAL line, .anomaly_type / .HALT nan_loss)
 *   crash    a traceback or crash signature (an NCCL timeout alone is a hang: some rank stopped)
 *   hang     a stall at the end of the evidence (heartbeat silence over the learned threshold at
 *            `nowS`, or at the last timestamped evidence offline), a watchdog dump or stall anomaly
 *            while the run had not completed, or an NCCL timeout
 *   stopped  the user stopped it (opts.stopped, KeyboardInterrupt, `.HALT` manual stop, HALT seen)
 *   slow     completed, but a throughput flatline or ≥ 20 % of the steps slow (≥ 3× median)
 *   pass     completed: final metrics seen or exit status 0
 *   incomplete  the evidence stops without an end-of-run marker and without a stall; when the exit
 *            status says it was killed (137, 124, ...) that is noted (e.g. killed by a timeout while
 *            still making progress)
 */
import { missedCollectives } from '../ingest/flight-recorder.js';
import { mainThreadTop } from '../ingest/stackdump.js';
import { rankSetText } from '../util/rank-set.js';
import {
  allSignatures,
  dumpsInOrder,
  exitCodeFile,
  firstNan,
  memJsonPeaks,
  metricsSeen,
  missingGradsOf,
  outputHolderNotes,
  resolveTracebackSteps,
  stepAt,
} from './evidence-facts.js';
import { type EvidenceState, ranksOf, type SignatureState } from './evidence-state.js';
import { lastWordsOf, lastWordsSummary } from './last-words.js';
import { headlineStall, stackDiffOf } from './rank-stacks.js';
import { recoveredSummary } from './recovered.js';
import type { AnalysisResult, CrashReport, DumpReport, StallReport } from './result.js';
import { isConsequence, isLauncherTraceback, isStopOrSummary, rootCauseOf } from './root-cause.js';
import { rateSummary, throughputOf, unrecognisedNote } from './run-rates.js';
import type { Verdict } from './signatures.js';
import {
  currentSilences,
  hotFramesOf,
  pastStallReports,
  rankOfDump,
  suspectsOf,
  whereIn,
} from './silences.js';
import type { SlowStep } from './step-stats.js';
import { stragglersOf } from './straggler.js';
import { oomKillsOf, teardownField, teardownSummary } from './teardown.js';
import { placedOnTimeoutCulprit } from './timeout-culprit.js';

export interface ResultOptions {
  /** the clock (trainer's epoch seconds); offline: defaults to the last timestamped evidence */
  nowS?: number;
  processAlive?: boolean;
  exitCode?: number | null;
  /** the user stopped the run */
  stopped?: boolean;
}

/** Exit statuses that mean "killed from outside": SIGKILL, SIGTERM, timeout(1), torchrun's -9/-15. */
const KILLED = new Set([137, 143, 124, -9, -15]);
const COLLECTIVE_TIMEOUTS = new Set(['nccl-timeout', 'gloo-timeout']);
// SignalException: torchrun's own, when a signal stopped it (it forwards it to the workers)
const NOT_CRASHES = new Set(['KeyboardInterrupt', 'SystemExit', 'ChildFailedError', 'SignalException']);

function exitCodeOf(s: EvidenceState, opts: ResultOptions): number | null {
  if (opts.exitCode !== undefined && opts.exitCode !== null) return opts.exitCode;
  return exitCodeFile(s) ?? s.exitFromLog;
}

function completedSteps(s: EvidenceState): number {
  let max = 0;
  // a rank that only writes step_start beats: starting step k means k−1 is done
  for (const steps of s.steps.values()) max = Math.max(max, steps.completed());
  return max;
}

function crashOf(s: EvidenceState, sigs: SignatureState[]): CrashReport | null {
  const summary = s.tracebacks.find((t) => t.ev.torchrun !== undefined)?.ev.torchrun;
  const failures = [...(summary?.failures ?? []), ...s.torchrunFailed];
  // the culprit from the workers' own exceptions; torchrun's "first observed failure" is evidence
  const unprefixed = rankOfUnprefixed(s, failures);
  const root = rootCauseOf(
    s.tracebacks.map((t) => ({
      ev:
        t.ev.rank === undefined && unprefixed !== null && !isStopOrSummary(t.ev.exception)
          ? { ...t.ev, rank: unprefixed }
          : t.ev,
      at: t.at,
      step: t.step ?? 1,
    })),
    failures.map((f) => f.rank),
  );
  const torchrunRoot = summary?.rootCauseRank ?? null;
  // no worker raised anything, and torchrun itself failed: the launcher's failure, not training's
  const launcher = root === null ? s.tracebacks.find((t) => isLauncherTraceback(t.ev)) : undefined;
  if (launcher !== undefined)
    return {
      rank: 0,
      step: launcher.step ?? 1,
      exception: launcher.ev.exception,
      message: launcher.ev.message,
      frame: launcher.ev.frames[launcher.ev.frames.length - 1] ?? null,
      basis: 'launcher-error',
    };
  if (root !== null) {
    const { basis, ranks, consequences, ...r } = root;
    const out: CrashReport = { ...r, basis };
    if (ranks.length > 1) out.ranks = ranks;
    if (consequences.length > 0) out.consequences = consequences;
    if (torchrunRoot !== null) out.torchrunRootCause = torchrunRoot;
    return out;
  }
  let rank: number | null = torchrunRoot;
  if (rank === null && s.torchrunFailed.length > 0) rank = s.torchrunFailed[0]!.rank;
  const crashSig = sigs.find((h) => h.sig.implies === 'crash');
  if (rank === null && crashSig === undefined) {
    if (summary === undefined) return null;
    rank = 0;
  }
  rank ??= crashSig?.rank ?? 0;
  const exitCode = summary?.rootCauseExitCode;
  const out: CrashReport = {
    rank,
    step: s.tracebacks[0]?.step ?? completedSteps(s) + 1,
    exception: crashSig?.sig.name ?? 'ChildFailedError',
    message: crashSig?.text ?? (exitCode === undefined ? 'child process failed' : `exitcode ${exitCode}`),
    frame: null,
    basis: crashSig === undefined ? 'launcher' : 'signature',
  };
  if (torchrunRoot !== null) out.torchrunRootCause = torchrunRoot;
  return out;
}

/**
 * The rank of worker tracebacks printed without a rank prefix (torchrun without --tee; a current
 * torch prefixes `[rankN]:` only to some exceptions): the one rank torchrun reports exited with a
 * status of its own (not killed by its signal) that printed no prefixed traceback. Null when that
 * is not exactly one rank.
 */
function rankOfUnprefixed(
  s: EvidenceState,
  failures: Array<{ rank: number; exitCode: number | null }>,
): number | null {
  const prefixed = new Set(s.tracebacks.map((t) => t.ev.rank).filter((r) => r !== undefined));
  const own = new Set(
    failures
      .filter((f) => f.exitCode !== null && f.exitCode >= 0 && !prefixed.has(f.rank))
      .map((f) => f.rank),
  );
  return own.size === 1 ? [...own][0]! : null;
}

/**
 * a worker raised something that is neither a stop nor a consequence of another rank's exit. A
 * traceback cut off before its exception line was being printed when the process was killed: at
 * 512 ranks the stop's SIGKILL came while many ranks still printed the KeyboardInterrupt of its
 * SIGINT, and those halves made a stopped hang a "crash" of UnknownError
 */
function hasOriginalException(s: EvidenceState): boolean {
  return s.tracebacks.some(
    (t) =>
      !isStopOrSummary(t.ev.exception) &&
      t.ev.torchrun === undefined &&
      !isConsequence(t.ev) &&
      t.ev.cutOff !== true,
  );
}

function nanOf(s: EvidenceState, sigs: SignatureState[]): { rank: number; step: number } | null {
  const hit = firstNan(s);
  if (hit !== null) return hit;
  if (!sigs.some((h) => h.sig.implies === 'nan')) return null;
  // a nan anomaly file with no NaN in the evidence itself: the step announced, or the next one
  return { rank: 0, step: stepAt(s, 0, { rank: s.progress.get('output')?.get(0) ?? null, rank0: null }) };
}

function dumpsOf(s: EvidenceState): DumpReport[] {
  return dumpsInOrder(s).map((d) => {
    const r: DumpReport = {
      file: d.file,
      kind: d.dumpKind,
      mainThreadTop: mainThreadTop(d) ?? null,
      mainThreadUserTop: whereIn(d),
    };
    if (d.signal !== undefined) r.signal = d.signal;
    if (d.ts !== undefined) r.ts = d.ts;
    const rank = rankOfDump(s, d.file);
    if (rank !== undefined) r.rank = rank;
    return r;
  });
}

function memoryOf(s: EvidenceState): AnalysisResult['memory'] {
  // heartbeats carry MiB (memory_reserved()//2**20); mem_*.json carry bytes: same floor division
  const toMiB = (v: number | null) => (v === null ? null : Math.floor(v / 2 ** 20));
  const json = memJsonPeaks(s);
  const reserved = [s.hbPeakReservedMiB, toMiB(json.reserved)].filter((v) => v !== null);
  const alloc = [s.hbPeakAllocMiB, toMiB(json.alloc)].filter((v) => v !== null);
  if (reserved.length === 0) return null;
  const out: NonNullable<AnalysisResult['memory']> = { peakReservedMiB: Math.max(...reserved) };
  if (alloc.length > 0) out.peakAllocMiB = Math.max(...alloc);
  return out;
}

export function decide(s: EvidenceState, opts: ResultOptions): AnalysisResult {
  const notes: string[] = [];
  const exitCode = exitCodeOf(s, opts);
  const killed = exitCode !== null && KILLED.has(exitCode);
  const endTs = opts.nowS ?? s.lastEvidenceTs;
  const silences = endTs === null ? [] : currentSilences(s, endTs, !opts.processAlive);
  // where the evidence stops: the first stalled rank, else (below) the rank furthest behind; on
  // many ranks: the one the others wait for, not the first to fall silent
  const headline = headlineStall(s, silences);
  const positions = endTs === null ? [] : s.detector.check(endTs);
  let stepsReached = completedSteps(s);
  resolveTracebackSteps(s);
  const sigs = allSignatures(s);
  const implied = (v: Verdict) => sigs.some((h) => h.sig.implies === v);
  const completed = metricsSeen(s) || exitCode === 0;

  const nan = nanOf(s, sigs);
  const crashSignature = implied('crash');
  const realTracebacks = s.tracebacks.filter((t) => !NOT_CRASHES.has(t.ev.exception.split('.').pop()!));
  // a collective's timeout (NCCL's watchdog, gloo's transport) is a hang: the ranks that raise it
  // came to the collective, and their tracebacks are consequences of the rank that never did
  const collectiveTimeoutOnly =
    implied('hang') && sigs.some((h) => COLLECTIVE_TIMEOUTS.has(h.sig.name)) && !crashSignature;
  const crashed =
    crashSignature ||
    (realTracebacks.length > 0 && !collectiveTimeoutOnly) ||
    s.tracebacks.some((t) => t.ev.torchrun !== undefined) ||
    (exitCode !== null && exitCode !== 0 && !killed && exitCode !== 130);
  const crash = crashed || realTracebacks.length > 0 ? crashOf(s, sigs) : null;
  const hangEvidence = headline !== undefined || (!completed && implied('hang'));
  const userStopped =
    opts.stopped === true ||
    exitCode === 130 ||
    implied('stopped') ||
    s.tracebacks.some((t) => t.ev.exception.endsWith('KeyboardInterrupt'));

  // a closing summary's step count (`"steps": N`, printed when log_every hid the last steps) is
  // the configured count: it says how far the run got only when it ended cleanly
  if (nan === null && !crashed && !userStopped && !hangEvidence && metricsSeen(s))
    stepsReached = Math.max(stepsReached, s.summarySteps);

  let verdict: Verdict;
  if (nan !== null) verdict = 'nan';
  // a hang stopped by nsa-dbg (or anyone) ends in the launcher's failure table, KeyboardInterrupts
  // and peers' transport errors: none of that is a crash of its own
  else if (
    crashed &&
    !collectiveTimeoutOnly &&
    !(hangEvidence && !crashSignature && !hasOriginalException(s))
  )
    verdict = 'crash';
  else if (hangEvidence) verdict = 'hang';
  else if (userStopped) verdict = 'stopped';
  else if (completed) verdict = 'pass';
  else verdict = 'incomplete';

  const slow: SlowStep[] = [];
  let slowCount = 0;
  for (const [rank, steps] of [...s.steps.entries()].sort((a, b) => a[0] - b[0])) {
    const r = steps.slow(rank);
    slow.push(...r.steps);
    slowCount += r.count;
  }
  const suspects = suspectsOf(s, silences);
  if (verdict === 'pass') {
    const total = Math.max(1, stepsReached);
    // a step that ran so long it was checked (and found busy) is far past what the lane expects
    if (implied('slow') || suspects.length > 0 || (slowCount >= 2 && slowCount >= 0.2 * total))
      verdict = 'slow';
  }

  let lastPosition: StallReport | null = null;
  const r2 = (v: number) => Math.round(v * 100) / 100;
  if (headline !== undefined) {
    const { judgement: j, sinceTs: _since, ...at } = headline.stall;
    lastPosition = { ...at, silenceS: r2(at.silenceS), thresholdS: r2(at.thresholdS) };
    if (j !== null && (j.state === 'stuck' || j.state === 'blocked-native')) {
      lastPosition.state = j.state;
      lastPosition.evidence = j.evidence;
      lastPosition.why = j.why;
      lastPosition.frame = j.frame;
    }
    if (headline.culprit !== null) lastPosition.rootCause = headline.culprit;
  } else {
    const behind = positions.filter((p) => p.phase !== '').sort((a, b) => a.step - b.step)[0];
    const where = behind === undefined ? undefined : s.detector.position(behind.rank);
    if (behind !== undefined && where !== null && where !== undefined) {
      lastPosition = { rank: behind.rank, step: where.step, where: where.where };
      if (behind.lastBeatAgeS !== null) lastPosition.silenceS = r2(behind.lastBeatAgeS);
      if (behind.thresholdS !== null) lastPosition.thresholdS = r2(behind.thresholdS);
    }
  }
  if (verdict === 'hang' && lastPosition !== null) lastPosition = placedOnTimeoutCulprit(s, lastPosition);
  const stall: StallReport | null = verdict === 'hang' ? lastPosition : null;

  if (killed)
    notes.push(`killed (exit ${exitCode})${verdict === 'incomplete' ? ' while still making progress' : ''}`);
  if (opts.processAlive) notes.push('the process is still running');
  notes.push(...outputHolderNotes(s));
  const stepFormat = s.cadence.report(s.inferredFormat ?? undefined);
  if (stepFormat === null && s.unrecognised !== null && s.unrecognised.lines > 0)
    notes.push(unrecognisedNote(s.unrecognised));
  else if (stepFormat?.inferred !== undefined)
    notes.push(
      `step lines learned from the output: "${stepFormat.inferred.template}" (stepRegex ${stepFormat.inferred.stepRegex})`,
    );
  // logged every k steps with nothing else saying where a rank is: the step after the last one
  // logged is not a step anyone saw; say "after step N (logged every k)"
  const unseen =
    stepFormat !== null && stepFormat.every > 1 && !s.progress.has('beat') && !s.progress.has('table');
  const explosion = (() => {
    for (const [rank, steps] of s.steps) {
      const e = steps.lossExplosion();
      if (e !== null) return { rank, ...e };
    }
    return null;
  })();

  const result: AnalysisResult = {
    verdict,
    stepsReached,
    ranks: ranksOf(s),
    stall,
    nan,
    crash,
    slowSteps: slow,
    throughput: throughputOf(s),
    stepFormat,
    memory: memoryOf(s),
    dumps: dumpsOf(s),
    lastWords: lastWordsOf(s),
    ...teardownField(s),
    skippedLines: s.skipped,
    summary: '',
    lastPosition,
    lossExplosion: explosion,
    pastStalls: pastStallReports(s),
    signatures: sigs.map((h) => ({
      name: h.sig.name,
      meaning: h.sig.meaning,
      implies: h.sig.implies,
      count: h.count,
      rank: h.rank,
      text: h.text,
    })),
    exitCode,
    killed,
    completed,
    closingSummary: metricsSeen(s),
    gpus: [...s.gpus.entries()].map(([index, g]) => ({ index, ...g })),
    missingGrads: missingGradsOf(s),
    notes,
    suspects,
    dumpRequests: s.dumpRequests.map((r) => ({
      rank: r.rank,
      pid: r.pid,
      at: r.ts,
      outcome: r.outcome,
      purpose: r.purpose,
      ...(r.file === undefined ? {} : { file: r.file }),
    })),
    hotFrames: hotFramesOf(dumpsInOrder(s)),
    stackDiff: stackDiffOf(s, silences),
    stragglers: stragglersOf(s),
    detector: { ...s.detector.settings(), ...s.judge },
  };
  if (s.flightRecorder.size > 0) {
    const files = [...s.flightRecorder.keys()].sort();
    result.flightRecorder = missedCollectives(files.map((f) => s.flightRecorder.get(f)!));
  }
  // multi-node: the culprit's node goes with its rank
  const nodeOf = (rank: number) => s.nodes.placeOf(rank)?.node;
  if (stall && nodeOf(stall.rank)) stall.node = nodeOf(stall.rank);
  if (crash && nodeOf(crash.rank)) crash.node = nodeOf(crash.rank);
  if (unseen) {
    for (const p of [stall, crash, lastPosition]) if (p !== null && p.step > 0) p.afterStep = p.step - 1;
  }
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
  result.summary = `${summarize(result)}${recovered ? `; ${recovered}` : ''}${seen ? `; ${seen}` : ''}${words ? `; ${words}` : ''}`;
  return result;
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
