/**
 * The culprit of a multi-rank crash. When one rank dies, its peers die after it of transport and
 * collective errors (gloo "Connection closed by peer", NCCL "remote process exited", watchdog
 * timeouts), and torchrun's "Root Cause (first observed failure)" names whichever worker it saw
 * exit first: often a peer, never reliably the culprit. So the root cause is the earliest worker
 * exception that is not such a consequence; torchrun's block is kept as evidence beside it. When
 * every rank raised the same exception (DDP's "Expected to have finished reduction" on all ranks),
 * it is reported once, with the ranks that raised it. The verdict's crash report (crashOf) is read
 * from the evidence by these rules, torchrun's summary and the crash signatures its fallbacks.
 */
import type { Frame, TracebackEvent } from '../ingest/events.js';
import { type At, compareAt } from '../ingest/order.js';
import { completedSteps } from './evidence-facts.js';
import type { EvidenceState, SignatureState } from './evidence-state.js';
import type { CrashReport } from './result.js';
import { userFrame } from './user-frame.js';

/** What another rank's exit (or a hung peer) makes a healthy rank raise. */
const CONSEQUENCE =
  /Connection closed by peer|Connection reset by peer|Broken pipe|remote process exited|NCCL communicator was aborted|Watchdog caught collective operation timeout|ran for \d+ milliseconds before timing out|Timed out waiting|Socket Timeout|ProcessGroup\w* is (?:aborted|shut ?down)|Connection refused|Some NCCL operations have failed or timed out/i;
/**
 * exceptions that never are the root cause themselves, nor a crash: the launcher's summary, a stop
 * (SignalException: torchrun's own, when a signal stopped it; it forwards it to the workers)
 */
const NEVER_ROOT = new Set(['ChildFailedError', 'SignalException', 'KeyboardInterrupt', 'SystemExit']);

export interface RankedTraceback {
  ev: TracebackEvent;
  at: At;
  step: number;
}

export interface RootCause {
  rank: number;
  /** every rank that raised the same exception (sorted); just [rank] when only one did */
  ranks: number[];
  step: number;
  exception: string;
  message: string;
  frame: Frame | null;
  /**
   * how the rank was chosen: `first-exception` (the earliest exception that is not a consequence),
   * `consequence-only` (every rank failed of another's exit: the first of those, or a rank that
   * died without a traceback), `single` (one process)
   */
  basis: 'first-exception' | 'consequence-only' | 'died-silently' | 'single';
  /** the other ranks' failures that followed from it */
  consequences: Array<{ rank: number; exception: string; message: string }>;
}

const shortName = (exception: string) => exception.split('.').pop() ?? exception;

/** the launcher's summary or a stop (SIGINT, SIGTERM to torchrun), never a cause */
export const isStopOrSummary = (exception: string) => NEVER_ROOT.has(shortName(exception));

/**
 * torchrun's own traceback (its entry point is in the frames), not a worker's: the launcher itself
 * failed (options it rejects, a rendezvous that never formed). Its summary of failed workers
 * (ChildFailedError) is not such a failure.
 */
export function isLauncherTraceback(ev: TracebackEvent): boolean {
  // a signal to torchrun (`timeout`, a scheduler, Ctrl+C) is a stop from outside, not its failure
  return (
    !isStopOrSummary(ev.exception) &&
    ev.frames.some((f) => /torch\/distributed\/(?:run|launch)\.py$/.test(f.file))
  );
}

/** is this exception what a rank raises because a peer exited or hung (not a cause itself)? */
export function isConsequence(ev: TracebackEvent): boolean {
  return CONSEQUENCE.test(`${ev.exception}: ${ev.message}`);
}

const firstLine = (m: string) => m.split('\n')[0] ?? '';

/**
 * The root cause among the workers' tracebacks (in the order they appeared). `failedRanks` are the
 * ranks torchrun reported failed, in its order (a rank killed by a signal prints no traceback).
 */
export function rootCauseOf(tracebacks: RankedTraceback[], failedRanks: number[]): RootCause | null {
  const workers = tracebacks.filter((t) => !isStopOrSummary(t.ev.exception) && !isLauncherTraceback(t.ev));
  if (workers.length === 0) return null;
  const rankOf = (t: RankedTraceback) => t.ev.rank ?? 0;
  const sorted = [...workers].sort((a, b) => compareAt(a.at, b.at));
  const ranksSeen = new Set(sorted.map(rankOf));
  // per rank, the last traceback is what ended the process (chained exceptions print several)
  const lastOf = new Map<number, RankedTraceback>();
  for (const t of sorted) lastOf.set(rankOf(t), t);
  const original = sorted.filter((t) => !isConsequence(t.ev));
  let chosen: RankedTraceback;
  let basis: RootCause['basis'];
  if (original.length > 0) {
    // that rank's last one: with chained exceptions, the one that ended the process
    const rank = rankOf(original[0]!);
    chosen = original.filter((t) => rankOf(t) === rank).pop()!;
    basis = ranksSeen.size === 1 ? 'single' : 'first-exception';
  } else {
    // every traceback is a consequence: a failed rank that printed none died of a signal (OOM
    // killer, segfault): that one is the cause
    const silent = failedRanks.find((r) => !ranksSeen.has(r));
    if (silent !== undefined) {
      return {
        rank: silent,
        ranks: [silent],
        step: sorted[0]!.step,
        exception: 'ChildFailedError',
        message: `rank ${silent} exited without a Python traceback (killed or crashed in native code)`,
        frame: null,
        basis: 'died-silently',
        consequences: [...lastOf.values()].map((t) => brief(t)),
      };
    }
    chosen = sorted[0]!;
    basis = ranksSeen.size === 1 ? 'single' : 'consequence-only';
  }
  // the same exception on other ranks: one report with all the ranks
  const same = (t: RankedTraceback) =>
    shortName(t.ev.exception) === shortName(chosen.ev.exception) &&
    firstLine(t.ev.message) === firstLine(chosen.ev.message);
  const ranks = [...new Set(sorted.filter(same).map(rankOf))].sort((a, b) => a - b);
  const consequences = [...lastOf.values()]
    .filter((t) => !ranks.includes(rankOf(t)))
    .sort((a, b) => rankOf(a) - rankOf(b))
    .map(brief);
  return {
    rank: rankOf(chosen),
    ranks,
    step: chosen.step,
    exception: chosen.ev.exception,
    message: chosen.ev.message,
    frame: userFrame(chosen.ev.frames),
    basis,
    consequences,
  };
}

function brief(t: RankedTraceback): { rank: number; exception: string; message: string } {
  return { rank: t.ev.rank ?? 0, exception: t.ev.exception, message: firstLine(t.ev.message).slice(0, 300) };
}

/** the verdict's crash report: the root cause, else torchrun's summary or a crash signature */
export function crashOf(s: EvidenceState, sigs: SignatureState[]): CrashReport | null {
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
  const crashSig = sigs.find((h) => h.sig.implies === 'crash');
  const failed = torchrunRoot ?? s.torchrunFailed[0]?.rank;
  if (failed === undefined && crashSig === undefined && summary === undefined) return null;
  const rank = failed ?? crashSig?.rank ?? 0;
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
export function hasOriginalException(s: EvidenceState): boolean {
  return s.tracebacks.some(
    (t) =>
      !isStopOrSummary(t.ev.exception) &&
      t.ev.torchrun === undefined &&
      !isConsequence(t.ev) &&
      t.ev.cutOff !== true,
  );
}
