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
import { EXIT_CODE_FILE, exitCodeOf } from '../ingest/launcher-files.js';
import {
  allSignatures,
  completedSteps,
  dumpsInOrder,
  dumpsOf,
  firstNan,
  memoryOf,
  metricsSeen,
  missingGradsOf,
  outputHolderNotes,
  resolveTracebackSteps,
  stepAt,
} from './evidence-facts.js';
import { type EvidenceState, ranksOf, type SignatureState } from './evidence-state.js';
import { lastWordsOf } from './last-words.js';
import { headlineStall, stackDiffOf } from './rank-stacks.js';
import type { AnalysisResult, StallReport } from './result.js';
import { crashOf, hasOriginalException, isStopOrSummary } from './root-cause.js';
import { throughputOf, unrecognisedNote } from './run-rates.js';
import type { Verdict } from './signatures.js';
import { currentSilences, hotFramesOf, pastStallReports, suspectsOf } from './silences.js';
import { round2, type SlowStep } from './step-stats.js';
import { stragglersOf } from './straggler.js';
import { teardownField } from './teardown.js';
import { placedOnTimeoutCulprit } from './timeout-culprit.js';
import { summaryOf } from './verdict-summary.js';

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

function nanOf(s: EvidenceState, sigs: SignatureState[]): { rank: number; step: number } | null {
  const hit = firstNan(s);
  if (hit !== null) return hit;
  if (!sigs.some((h) => h.sig.implies === 'nan')) return null;
  // a nan anomaly file with no NaN in the evidence itself: the step announced, or the next one
  return { rank: 0, step: stepAt(s, 0, { rank: s.progress.get('output')?.get(0) ?? null, rank0: null }) };
}

export function decide(s: EvidenceState, opts: ResultOptions): AnalysisResult {
  const notes: string[] = [];
  const exitCode = opts.exitCode ?? exitCodeOf(s.files.get(EXIT_CODE_FILE)) ?? s.exitFromLog;
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
  const realTracebacks = s.tracebacks.filter((t) => !isStopOrSummary(t.ev.exception));
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
  if (headline !== undefined) {
    const { judgement: j, sinceTs: _since, ...at } = headline.stall;
    lastPosition = { ...at, silenceS: round2(at.silenceS), thresholdS: round2(at.thresholdS) };
    if (j !== null && (j.state === 'stuck' || j.state === 'blocked-native'))
      Object.assign(lastPosition, { state: j.state, evidence: j.evidence, why: j.why, frame: j.frame });
    if (headline.culprit !== null) lastPosition.rootCause = headline.culprit;
  } else {
    const behind = positions.filter((p) => p.phase !== '').sort((a, b) => a.step - b.step)[0];
    const where = behind === undefined ? undefined : s.detector.position(behind.rank);
    if (behind !== undefined && where !== null && where !== undefined) {
      lastPosition = { rank: behind.rank, step: where.step, where: where.where };
      if (behind.lastBeatAgeS !== null) lastPosition.silenceS = round2(behind.lastBeatAgeS);
      if (behind.thresholdS !== null) lastPosition.thresholdS = round2(behind.thresholdS);
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
  result.summary = summaryOf(s, result);
  return result;
}
