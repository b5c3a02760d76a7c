/**
 * /proc of many ranks at once: the prober reads the process facts of every silent rank in a round,
 * and a stack request of many ranks signals them all. On a box reached over SSH (or a node reached
 * through srun), one command per node does it for all the node's pids, not one per rank: at 64 nodes
 * × 8 ranks that is 64 commands a round instead of 512, and a connection's channels are not exhausted.
 */
import { execForPid, groupByNode, procIsLocal, type Target } from '../targets/target.js';
import { type ProcReading, parseStat, readProc } from './proc-facts.js';

/**
 * prints, per pid: `@@ PID`, its stat line, `@@c` and its SigCgt, `@@w` and its wchan (nothing for a
 * pid that is gone). Shell builtins only (`read`, `printf`): no process is started per pid. With
 * `$(cat …)` and `sed` it forked six per pid, and at 512 silent ranks on this 2-core machine a round
 * of reads took seconds, the requests behind it waiting (measured: ~250 pids in 1.14 s before,
 * 0.07 s after, on an idle box). A node of a real cluster is spared those forks too. `read` sets its
 * variable from a last line without a newline (wchan has none)
 */
export const READ_SCRIPT = [
  'for p in "$@"; do',
  ' { read -r s < /proc/$p/stat; } 2>/dev/null || continue',
  ' c=; w=',
  ' { while read -r k v r; do case $k in SigCgt:) c=$v; break;; esac; done < /proc/$p/status; } 2>/dev/null',
  ' { read -r w < /proc/$p/wchan; } 2>/dev/null',
  ' printf "@@ %s\\n%s\\n@@c %s\\n@@w %s\\n" "$p" "$s" "$c" "$w"',
  'done',
].join('\n');

/** a reading with the process's caught-signals mask (SigCgt, hex) */
export type ProcReadingWithSignals = ProcReading & { sigCgt: string };

export function parseProcBatch(text: string): Map<number, ProcReadingWithSignals> {
  const out = new Map<number, ProcReadingWithSignals>();
  let pid: number | null = null;
  let stat = '';
  let sigCgt = '';
  for (const line of text.split('\n')) {
    const head = /^@@ (\d+)$/.exec(line);
    if (head !== null) {
      pid = Number(head[1]);
      stat = '';
      sigCgt = '';
      continue;
    }
    const c = /^@@c ?(.*)$/.exec(line);
    if (c !== null) {
      sigCgt = c[1]!.trim();
      continue;
    }
    const w = /^@@w ?(.*)$/.exec(line);
    if (w !== null && pid !== null) {
      const wchan = w[1]!.trim();
      out.set(pid, { ...parseStat(stat), wchan: wchan === '0' ? '' : wchan, sigCgt });
      pid = null;
      continue;
    }
    if (pid !== null) stat += line;
  }
  return out;
}

/** the facts of each pid (absent: gone), one command per node */
export function readProcMany(target: Target, pids: number[]): Promise<Map<number, ProcReadingWithSignals>> {
  return readPerNode(target, pids, READ_SCRIPT, parseProcBatch, async (p) => {
    const r = await readProc(target, p);
    if (r === null) return null;
    const status = await target.procStatus(p);
    return { ...r, sigCgt: /^SigCgt:\s*([0-9a-fA-F]+)/m.exec(status ?? '')?.[1] ?? '' };
  });
}

/**
 * One `sh -c SCRIPT sh PID...` per node for the pids on it (a remote box: one command, not one
 * per pid), each node's output parsed by `parse`; a node whose command fails adds nothing. With
 * `here`, each pid on this machine is read by it instead (its /proc is a file read away: nothing to
 * batch); a pid it finds gone (null) is absent.
 */
export async function readPerNode<T>(
  target: Target,
  pids: number[],
  script: string,
  parse: (stdout: string) => Map<number, T>,
  here?: (pid: number) => Promise<T | null>,
): Promise<Map<number, T>> {
  const out = new Map<number, T>();
  if (here !== undefined && procIsLocal(target)) {
    await Promise.all(
      pids.map(async (p) => {
        const r = await here(p);
        if (r !== null) out.set(p, r);
      }),
    );
    return out;
  }
  await Promise.all(
    groupByNode(target, pids).map(async (group) => {
      const r = await execForPid(target, group[0]!, ['sh', '-c', script, 'sh', ...group.map(String)]).catch(
        () => null,
      );
      if (r !== null) for (const [p, v] of parse(r.stdout)) out.set(p, v);
    }),
  );
  return out;
}

/**
 * Asks made in the same turn of the event loop go out together: each is queued, and one flush per
 * turn takes them all (the prober checks each silent rank on its own schedule, and they line up).
 * While a flush is out, asks wait and go together in the next one (one flush out at a time): at
 * 256 silent ranks asks came a few per turn, each a command per node, and a node's commands queued
 * up faster than it answered them; now a node has at most one command of each kind waiting.
 */
abstract class TurnBatcher<Ask, Answer> {
  private pending: Array<{ ask: Ask; answer: (a: Answer) => void }> = [];
  private scheduled = false;
  private flushing = false;

  protected queue(ask: Ask): Promise<Answer> {
    return new Promise((answer) => {
      this.pending.push({ ask, answer });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.flushing || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => void this.flushTurn());
  }

  private async flushTurn(): Promise<void> {
    const batch = this.pending.splice(0);
    this.scheduled = false;
    this.flushing = true;
    try {
      const answers = await this.flush(batch.map((b) => b.ask));
      for (const [i, b] of batch.entries()) b.answer(answers[i]!);
    } finally {
      this.flushing = false;
      this.schedule();
    }
  }

  /** one answer per ask, in order */
  protected abstract flush(asks: Ask[]): Promise<Answer[]>;
}

/** /proc reads asked for in one turn: one readProcMany (one command per node) */
export class ProcBatcher extends TurnBatcher<number, ProcReadingWithSignals | null> {
  constructor(private readonly target: Target) {
    super();
  }

  read(pid: number): Promise<ProcReadingWithSignals | null> {
    return this.queue(pid);
  }

  protected async flush(pids: number[]): Promise<Array<ProcReadingWithSignals | null>> {
    const got = await readProcMany(this.target, [...new Set(pids)]).catch(
      () => new Map<number, ProcReadingWithSignals>(),
    );
    return pids.map((p) => got.get(p) ?? null);
  }
}

/**
 * $1 the request id, then (pid, stack log, signal) triples: mark each log with the id and the box's
 * time of sending (the in-python mark is timed against it, where the hook writes no `# seen`), then
 * signal its process. One `date` for the command, not one per pid: the only process it starts
 */
const SIGNAL_MANY =
  'id=$1; shift; t=$(date +%s.%N 2>/dev/null); while [ $# -ge 3 ]; do printf "# request %s %s\\n" "$id" "$t" >> "$2" && kill -s "$3" "$1"; shift 3; done';

/** a process to signal, and the stack log its request is marked in */
export interface SignalAsk {
  pid: number;
  log: string;
  signal: number;
}

/**
 * `script` once per node of the processes in `asks`, called with the request id, then a (pid, stack
 * log, signal) triple per process: per node, how many it was given and its output (null: failed)
 */
export function signalPerNode(
  target: Target,
  script: string,
  id: string,
  asks: SignalAsk[],
): Promise<Array<{ n: number; stdout: string } | null>> {
  const pids = asks.map((a) => a.pid);
  return Promise.all(
    groupByNode(target, pids).map(async (group) => {
      const args = group.flatMap((pid) => {
        const a = asks.find((x) => x.pid === pid)!;
        return [String(pid), a.log, String(a.signal)];
      });
      const r = await execForPid(target, group[0]!, ['sh', '-c', script, 'sh', id, ...args]).catch(
        () => null,
      );
      return r === null ? null : { n: group.length, stdout: r.stdout };
    }),
  );
}

/**
 * Stack-hook signals asked for in the same turn go out together: each process's log gets its
 * `# request <id>` line, then the process its signal, with one command per node.
 */
export class SignalBatcher extends TurnBatcher<SignalAsk & { id: string }, undefined> {
  constructor(private readonly target: Target) {
    super();
  }

  send(pid: number, log: string, signal: number, id: string): Promise<undefined> {
    return this.queue({ pid, log, signal, id });
  }

  protected async flush(batch: Array<SignalAsk & { id: string }>): Promise<undefined[]> {
    const byId = new Map<string, typeof batch>();
    for (const b of batch) byId.set(b.id, [...(byId.get(b.id) ?? []), b]);
    await Promise.all([...byId].map(([id, list]) => signalPerNode(this.target, SIGNAL_MANY, id, list)));
    return batch.map(() => undefined);
  }
}
