/**
 * Where each rank was when a signal ended it (its last words: src/ingest/last-words.ts), for the
 * verdict's JSON and its summary: "ranks 0 and 1 were waiting in all_reduce when torchrun stopped
 * them (SIGTERM)". A rank waiting in a collective is a consequence of whoever it waited for; a rank
 * anywhere else was doing something of its own when it was stopped (a second lead).
 */
import type { Frame, LastWordsEvent, OomKillEvent } from '../ingest/events.js';
import { rankSetText } from '../util/rank-set.js';
import type { EvidenceState } from './evidence-state.js';
import { inCollective } from './stack-diff.js';
import { rssText } from './teardown.js';
import { userFrame } from './user-frame.js';

export interface LastWordsReport {
  rank: number;
  pid: number;
  /** `SIGTERM`, `SIGSEGV`, … */
  signal: string;
  /** when the signal came (epoch seconds); null for a fatal signal (faulthandler writes no time) */
  at: number | null;
  /** the main thread's innermost frame (the hook's own frames left out) */
  mainThreadTop: Pick<Frame, 'function' | 'file' | 'line'> | null;
  /**
   * where the user's code called the library the main thread stood in (an NCCL collective's wait
   * shows in torch.cuda.synchronize or .item(), called from the training loop); absent when the top
   * is the user's own code
   */
  calledFrom?: Pick<Frame, 'function' | 'file' | 'line'>;
  /** the main thread was waiting for its peers in a collective (stack-diff.ts's inCollective) */
  waiting: boolean;
  /** a fatal signal's record (faulthandler's, from C) */
  fatal: boolean;
  /**
   * the main thread ran no Python at all (faulthandler's `<no Python frame>`): its script had ended
   * or not begun. A watchdog's abort at exit reads so (torch 2.11's NCCL watchdog took a rank down
   * after its script had printed its last line: test/fixtures/last-words/h200x2-watchdog)
   */
  noPythonFrame?: true;
  /** the stack log it was read from */
  file: string;
}

/** where a rank's main thread was when it has no frame to name */
export function frameless(r: Pick<LastWordsReport, 'noPythonFrame'>): string {
  return r.noPythonFrame ? 'outside any Python code (its script had ended or not begun)' : 'in native code';
}

function reportOf(e: LastWordsEvent): LastWordsReport {
  const main = e.threads.find((t) => t.name === 'MainThread') ?? e.threads[0];
  const frames = main?.frames ?? [];
  const top = frames[frames.length - 1];
  const user = userFrame(frames);
  return {
    rank: e.rank,
    pid: e.pid,
    signal: e.signal,
    at: e.at,
    mainThreadTop: top === undefined ? null : { function: top.function, file: top.file, line: top.line },
    ...(user !== null && user !== top
      ? { calledFrom: { function: user.function, file: user.file, line: user.line } }
      : {}),
    // the same test as a hang's stacks: a collective (or DDP's sync point) among the innermost frames
    waiting: inCollective(frames),
    fatal: e.fatal,
    ...(main !== undefined && frames.length === 0 ? { noPythonFrame: true as const } : {}),
    file: e.file,
  };
}

/** every rank's last words, by rank then time (a process may have several: SIGINT, then SIGTERM) */
export function lastWordsOf(s: EvidenceState): LastWordsReport[] {
  return [...s.lastWords.values()]
    .map(reportOf)
    .sort((a, b) => a.rank - b.rank || (a.at ?? Infinity) - (b.at ?? Infinity) || (a.file < b.file ? -1 : 1));
}

/**
 * One clause per kind of ending, e.g. "ranks 0 and 1 were waiting in all_reduce when torchrun
 * stopped them (SIGTERM)", "rank 1 was in save_checkpoint (train.py:40) when SIGTERM came", "rank
 * 2 died of SIGSEGV in forward (model.py:88)", "rank 3 was killed by SIGKILL (no last words)". Each
 * rank's last record counts. `torchrun`: the run's launcher was torchrun (its failure lines or
 * summary were read), which stops the other workers. `sigkilled`: ranks the launcher saw die of
 * SIGKILL (exit -9): with no record of their own, that is all that can be said of them, unless the
 * kernel log names the OOM killer (`oom`, by rank: any launcher's ranks, seen dead or not).
 * `stopper`: who sent SIGTERM where the output says (Slurm's cancel line: "Slurm cancelled the job").
 */
export function lastWordsSummary(
  list: LastWordsReport[],
  torchrun: boolean,
  crashRank?: number,
  sigkilled: number[] = [],
  oom: ReadonlyMap<number, OomKillEvent> = new Map(),
  stopper: string | null = null,
): string {
  const last = new Map<number, LastWordsReport>();
  for (const r of list) last.set(r.rank, r);
  const groups = new Map<string, { ranks: number[]; r: LastWordsReport }>();
  for (const r of last.values()) {
    if (r.rank === crashRank && !r.fatal) continue; // its crash is the verdict; its stop says nothing
    const top = r.mainThreadTop;
    const from = r.calledFrom;
    const key = `${r.signal}|${r.fatal}|${r.waiting}|${top?.function ?? frameless(r)}|${r.waiting ? '' : `${top?.file}:${top?.line}|${from?.file}:${from?.line}`}`;
    const g = groups.get(key) ?? { ranks: [], r };
    g.ranks.push(r.rank);
    groups.set(key, g);
  }
  const clauses: string[] = [];
  for (const { ranks, r } of groups.values()) {
    const who = rankSetText(ranks);
    const many = ranks.length > 1;
    const top = r.mainThreadTop;
    const at = (f: Pick<Frame, 'function' | 'file' | 'line'>) =>
      `${f.function} (${f.file.split('/').pop()}:${f.line})`;
    const place =
      top === null ? frameless(r) : `in ${at(top)}${r.calledFrom ? ` from ${at(r.calledFrom)}` : ''}`;
    if (r.fatal) {
      clauses.push(`${who} died of ${r.signal} ${place}`);
      continue;
    }
    const was = many ? 'were' : 'was';
    const where = r.waiting && top !== null ? `waiting in ${top.function}` : place;
    // Slurm's cancel reaches the ranks through torchrun too: the cancel is the cause
    const when =
      stopper !== null && r.signal === 'SIGTERM'
        ? `when ${stopper} (SIGTERM)`
        : torchrun && r.signal === 'SIGTERM'
          ? `when torchrun stopped ${many ? 'them' : 'it'} (SIGTERM)`
          : `when ${r.signal} came`;
    clauses.push(`${who} ${was} ${where} ${when}`);
  }
  // SIGKILL leaves no last words (nothing can run): say so, the kill itself is the finding, and its
  // cause where the kernel logged one
  const silent = [...new Set([...sigkilled, ...oom.keys()])]
    .filter((r) => !last.has(r))
    .sort((a, b) => a - b);
  const byOom = silent.filter((r) => oom.has(r));
  const bare = silent.filter((r) => !oom.has(r));
  const were = (rs: number[]) => `${rankSetText(rs)} ${rs.length > 1 ? 'were' : 'was'}`;
  if (bare.length) clauses.unshift(`${were(bare)} killed by SIGKILL (no last words)`);
  if (byOom.length) {
    const kills = byOom.map((r) => oom.get(r)!);
    const rss = Math.max(...kills.map((k) => k.anonRssKiB ?? 0));
    const limit = kills.some((k) => k.memcg) ? ' (a cgroup memory limit)' : '';
    const size = rss > 0 ? `, ${byOom.length > 1 ? 'up to ' : ''}${rssText(rss)}` : '';
    clauses.unshift(`${were(byOom)} killed by SIGKILL; the kernel log says OOM killer${limit}${size}`);
  }
  return clauses.join('; ');
}
