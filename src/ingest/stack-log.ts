/**
 * A rank's stack log, `nsa-dbg-stacks_rank{R}_pid{P}.log`, written by nsa-dbg's stack hook
 * (src/stacks/sitecustomize.py) and by nsa-dbg itself:
 *
 *   # nsa-dbg stacks {"rank": 3, "rank_var": "RANK", "local_rank": 1, "pid": 4242, "signal": 12, …}
 *   # request 1795300000.123 1795300001.402       ← nsa-dbg, just before it signals the process
 *   Current thread 0x00007f… (most recent call first):   ← faulthandler, from C, at once
 *     File "train.py", line 40 in train_step
 *   …
 *   # in-python 1795300000.125                    ← the hook's Python handler, once Python runs again
 *
 * Each request's dump is the text after its `# request` line: a DumpEvent named `<path>@<id>`, with
 * the request's time and whether the main thread ran Python right after (within IN_PYTHON_S). The
 * id is when nsa-dbg decided to ask; the second number, when the box sent the signal (its own
 * clock, as the in-python time is): over a slow ssh link seconds can lie between the two, and only
 * the second says how soon Python ran. Older logs (and a `date` without %N) have only the id.
 * `rank_var` null: the process had no rank in its environment and the hook guessed 0 (the evidence
 * places it by its pid's heartbeats: src/analysis/worker-ranks.ts).
 */

import { parseJsonObject } from '../util/json-object.js';
import type { DumpEvent, WorkerEvent } from './events.js';
import { parseStackDump } from './stackdump.js';

/** a Python handler that answers this soon after the request ran with the main thread in Python */
export const IN_PYTHON_S = 1;
/** a dump's text kept at most (the rest of a runaway one is dropped) */
const MAX_SEGMENT_CHARS = 1 << 20;

const HEADER = /^# nsa-dbg stacks (.*)$/;
const REQUEST = /^# request (\d+(?:\.\d+)?)(?:\s+(\S+))?\s*$/;
const NUMBER = /^\d+(?:\.\d+)?$/;
const IN_PYTHON = /^# in-python (\d+(?:\.\d+)?)\s*$/;

/** the id nsa-dbg gives a request (its time, trainer clock) and the dump's name in the evidence */
export function stackRequestId(ts: number): string {
  return ts.toFixed(3);
}
export function stackDumpName(logPath: string, id: string): string {
  return `${logPath}@${id}`;
}

interface Segment {
  id: string;
  ts: number;
  /** when the signal went out, box clock (null: not written) */
  sentTs: number | null;
  text: string;
  inPythonTs: number | null;
  /** lines came since it was last read */
  dirty: boolean;
}

export class StackLogReader {
  private main: string | null = null;
  private cur: Segment | null = null;

  constructor(
    private readonly path: string,
    private readonly onWorker: (w: WorkerEvent) => void,
    private readonly onDump: (d: DumpEvent) => void,
  ) {}

  /** the file's next line (without its newline) */
  line(line: string): void {
    const h = HEADER.exec(line);
    if (h !== null) {
      this.header(h[1]!);
      return;
    }
    const r = REQUEST.exec(line);
    if (r !== null) {
      this.flush();
      const sent = r[2] !== undefined && NUMBER.test(r[2]) ? Number(r[2]) : null;
      this.cur = { id: r[1]!, ts: Number(r[1]), sentTs: sent, text: '', inPythonTs: null, dirty: false };
      return;
    }
    const cur = this.cur;
    if (cur === null) return; // a dump nobody asked for (someone else's signal): not a request's
    const p = IN_PYTHON.exec(line);
    if (p !== null) {
      if (cur.inPythonTs === null) {
        cur.inPythonTs = Number(p[1]);
        this.emit(cur);
      }
      return;
    }
    if (cur.text.length >= MAX_SEGMENT_CHARS) return;
    cur.text += `${line}\n`;
    cur.dirty = true;
  }

  /** the lines read so far are all there is for now: the dump as far as it got is read */
  flush(): void {
    if (this.cur?.dirty) this.emit(this.cur);
  }

  /** the end of the file: the last dump as far as it got */
  end(): void {
    if (this.cur !== null) this.emit(this.cur);
  }

  private header(json: string): void {
    const o = parseJsonObject(json);
    const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
    const rank = int(o?.rank);
    const pid = int(o?.pid);
    if (o === null || rank === null || pid === null) return;
    this.main = typeof o.main === 'string' ? o.main.toLowerCase() : null;
    this.onWorker({
      kind: 'worker',
      rank,
      localRank: int(o.local_rank) ?? rank,
      pid,
      host: typeof o.host === 'string' ? o.host : '',
      signal: int(o.signal) ?? 12,
      file: this.path,
      path: typeof o.path === 'string' ? o.path : '',
      ts: typeof o.t === 'number' && Number.isFinite(o.t) ? o.t : 0,
      // `rank_var: null`: no rank in its environment (older hooks did not say: taken as known)
      ...(o.rank_var === null ? { rankGuessed: true as const } : {}),
    });
  }

  private emit(s: Segment): void {
    s.dirty = false;
    const d = parseStackDump(s.text, stackDumpName(this.path, s.id));
    if (d === null) return;
    d.ts = s.ts;
    for (const t of d.threads)
      if (this.main !== null && t.ident?.toLowerCase() === this.main) t.name = 'MainThread';
    if (s.inPythonTs !== null) d.inPython = s.inPythonTs - (s.sentTs ?? s.ts) <= IN_PYTHON_S;
    this.onDump(d);
  }
}
