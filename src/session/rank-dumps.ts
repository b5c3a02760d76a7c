/**
 * `d` on a run of many ranks: one stack request per rank, through the run's one StackSampler, so
 * each dump is filed with the rank that was asked (JSON `dumps[].rank`, `dumpRequests[]`). Signals
 * go to the ranks' own pids (from their heartbeats), never to torchrun: it does not forward SIGUSR1
 * and would die of it. A rank blocked in a collective cannot run its handler: it is reported as
 * `none-within-5s` ("blocked outside Python, in a collective?").
 */
import type { DumpRequestEvent } from '../ingest/events.js';
import type { StackSampler } from '../runs/stack-sampler.js';
import { debugLog } from '../util/debug-log.js';
import { rankSetText } from '../util/rank-set.js';
import type { LiveModel } from './live-model.js';

/** the status line's words per kind of outcome, in this order */
const OUTCOME_WORDS: Array<[Array<DumpRequestEvent['outcome']>, (ranks: string) => string]> = [
  [['faulthandler', 'written', 'py-spy'], (r) => `dumped ${r}`],
  [['none-within-5s'], (r) => `${r}: no dump within 5 s (blocked outside Python, in a collective?)`],
  [['no-handler'], (r) => `${r}: no SIGUSR1 handler and no py-spy, not signalled`],
];

/** one line per outcome, for the status line */
export function describeDumps(reqs: DumpRequestEvent[]): string {
  const parts = OUTCOME_WORDS.flatMap(([outcomes, words]) => {
    const ranks = reqs.filter((r) => outcomes.includes(r.outcome)).map((r) => r.rank);
    return ranks.length ? [words(rankSetText(ranks))] : [];
  });
  return parts.join('; ') || 'no rank to dump';
}

/** ask every rank for its stack; resolves with the outcomes, rank order */
export async function dumpEveryRank(
  sampler: StackSampler,
  ranks: Array<[rank: number, pid: number]>,
): Promise<DumpRequestEvent[]> {
  const sorted = [...ranks].sort((a, b) => a[0] - b[0]);
  if (sorted.length === 1) return [await sampler.request(sorted[0]![0], sorted[0]![1], 'user')];
  return (await sampler.requestMany(sorted, 'user')).sort((a, b) => a.rank - b.rank);
}

/**
 * At a confirmed hang on many ranks: each silent rank not yet asked for its stack during its
 * silence is asked now (one at a time, like every request), so the evidence holds one per rank.
 */
export async function askEverySilentRank(
  sampler: StackSampler,
  model: LiveModel,
  pidOf: (rank: number) => number | undefined,
): Promise<void> {
  const silent = model.silences(Date.now());
  if (silent.length < 2) return sampler.quiet();
  // the requests under way finish (a stop would drop them unanswered) unless the verdict needs
  // nothing more from them: at 512 ranks on 2 cores the prober's round in flight took 17–35 s
  // (the stop still waits for a trainer's-handler request whose signal went out: it is recorded)
  const quiet = () => quietUnlessSettled(sampler, settledWatch(model));
  const asks: Array<[number, number]> = [];
  for (const c of silent) {
    const pid = pidOf(c.rank);
    if (pid !== undefined && (sampler.lastAskedS(c.rank) ?? -Infinity) < c.sinceTs) asks.push([c.rank, pid]);
  }
  const t0 = Date.now();
  const answers = await sampler.requestMany(asks, 'suspect');
  const t1 = Date.now();
  // requests queued before (by the prober) finish too, and late answers freed by the stop must
  // land in a new second, not over a filed dump (the stop waits for that itself: stopQuietly)
  await quiet();
  debugLog(
    `${rankSetText(asks.map(([r]) => r))} of ${silent.length} silent asked at once: ${answers.filter((a) => a.outcome === 'faulthandler').length} hook dumps in ${((t1 - t0) / 1000).toFixed(1)} s, then ${((Date.now() - t1) / 1000).toFixed(1)} s for the requests before them`,
  );
}

/**
 * The hang's verdict has nothing more to learn: its culprit and every waiting rank's stack are in
 * (rank-stacks.ts). A request of the culprit still under way is not waited for: the stop waits for
 * it instead (a trainer's-handler request whose signal went out is recorded also after the stop's
 * close(), so its dump is filed with the culprit's rank, and the verdict after the exit reads it).
 * Waiting for it here held the verdict back 9–28 s at 512 ranks on 2 cores.
 */
export function verdictSettled(model: LiveModel): boolean {
  return model.settledStall(Date.now()) !== null;
}

/**
 * verdictSettled, for a caller that asks every 250 ms: judged at most once a second. Judging every
 * silent rank four times a second took a fifth of the engine's time while a hang of 512 ranks was
 * concluded, and the node commands it waited on were answered that much later.
 */
export function settledWatch(model: LiveModel, nowMs = Date.now): () => boolean {
  let judgedAtMs = Number.NEGATIVE_INFINITY;
  return () => {
    const now = nowMs();
    if (now - judgedAtMs < SETTLED_LOOK_MS) return false;
    judgedAtMs = now;
    return model.settledStall(now) !== null;
  };
}

/** how often settledWatch judges the silences */
const SETTLED_LOOK_MS = 1000;

/** the sampler's quiet(), or sooner once `settled()` holds (looked at every 250 ms) */
async function quietUnlessSettled(sampler: StackSampler, settled: () => boolean): Promise<void> {
  let done = false;
  const finish = () => {
    done = true;
  };
  void sampler.quiet().then(finish, finish);
  while (!done && !settled()) await new Promise((r) => setTimeout(r, 250));
}
