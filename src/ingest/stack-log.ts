/**
 * A rank's stack log, `nsa-dbg-stacks_rank{R}_pid{P}.log`, written by nsa-dbg's stack hook
 * (src/stacks/sitecustomize.py) and by nsa-dbg itself:
 *
 *   # nsa-dbg stacks {"rank": 3, "rank_var": "RANK", "local_rank": 1, "pid": 4242, "signal": 12, …}
 *   # request 1795300000.123 1795300001.402       ← nsa-dbg, just before it signals the process
 *   Current thread 0x00007f… (most recent call first):   ← faulthandler, from C, at once
 *     File "train.py", line 40 in train_step
 *   …
 *   # seen 1795300000.124                         ← the hook's watcher thread, once the process runs
 *   # in-python 1795300000.125                    ← the hook's Python handler, once Python runs again
 *   # request 1795300002.500 1795300002.501 sample ← a straggler sample (src/session/straggler-sampling.ts)
 *   # samples 23                                  ← after `# marks seen`: samples go by SIGURG …
 *   # request 1795300003.100 1795300003.101 sample
 *   Thread 0x00007f… (most recent call first):     ← … the watcher writes the main thread's frames
 *     File "train.py", line 52 in all_reduce
 *   # sampled 1795300003.102                      ← … and this mark, in one write: the sample is whole
 *
 * Each request's dump is the text after its `# request` line: a DumpEvent named `<path>@<id>`, with
 * the request's time and whether the main thread ran Python right after (within IN_PYTHON_S of
 * the watcher's `# seen`, where the hook writes it: `# marks seen` after the header says so). The
 * id is when nsa-dbg decided to ask; the second number, when the box sent the signal (its own
 * clock, as the in-python time is): over a slow ssh link seconds can lie between the two, and only
 * the second says how soon Python ran. Older logs (and a `date` without %N) have only the id.
 * `rank_var` null: the process had no rank in its environment and the hook guessed 0 (the evidence
 * places it by its pid's heartbeats: src/analysis/worker-ranks.ts).
 * A request marked `sample` is a straggler sample: read once, when whole (its in-python mark, the
 * next request or the end), and handed on as a StackSampleEvent to be counted, not kept as a dump:
 * many thousands of them come in a long run.
 */

import { parseJsonObject } from '../util/json-object.js';
import type { DumpEvent, LastWordsEvent, StackSampleEvent, WorkerEvent } from './events.js';
import {
  FATAL_HEADER,
  fatalSignalName,
  isHookThread,
  LAST_WORDS_END,
  LAST_WORDS_HEADER,
  lastWordsThreads,
} from './last-words.js';
import { parseStackDump } from './stackdump.js';

/** a Python handler that answers this soon after the request ran with the main thread in Python */
export const IN_PYTHON_S = 1;
/**
 * A hook that marks `# seen` is waited for this long after the signal went out before a dump with
 * neither mark is taken for a main thread outside Python. The watcher needs a core and the GIL:
 * on a loaded box it comes seconds late, and a main thread that holds the GIL in native code keeps
 * it from ever coming (that rank is judged after this long, not after IN_PYTHON_S)
 */
export const SEEN_WAIT_S = 5;
/** a dump's text kept at most (the rest of a runaway one is dropped) */
const MAX_SEGMENT_CHARS = 1 << 20;

const HEADER = /^# nsa-dbg stacks (.*)$/;
const REQUEST = /^# request (\d+(?:\.\d+)?)(?:\s+(\S+))?(?:\s+(sample))?\s*$/;
/** the mark of a straggler sample's request */
export const SAMPLE_MARK = 'sample';
const NUMBER = /^\d+(?:\.\d+)?$/;
/**
 * the hook's marks after a dump: the main thread ran Python, the watcher thread saw the signal;
 * after a sample by the sample signal: the watcher wrote it (the sample is whole)
 */
const MARK = /^# (in-python|seen|sampled) (\d+(?:\.\d+)?)\s*$/;
const MARKS_SEEN = /^# marks seen\s*$/;
/** the hook's watcher writes samples on this signal (`off`: the trainer took the signal over) */
const SAMPLES = /^# samples (\d+|off)\s*$/;

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
  /** when the hook's watcher thread saw the signal, box clock (null: not written, or not yet) */
  seenTs: number | null;
  /** lines came since it was last read */
  dirty: boolean;
  /** a straggler sample: handed on once, when whole */
  sample: boolean;
  done: boolean;
}

/** a last-words record being read (src/ingest/last-words.ts) */
interface LastWordsSegment {
  n: number;
  signal: string;
  at: number | null;
  fatal: boolean;
  text: string;
  dirty: boolean;
}

export class StackLogReader {
  private main: string | null = null;
  private cur: Segment | null = null;
  private words: LastWordsSegment | null = null;
  private wordsCount = 0;
  /** the hook writes `# seen` marks: how soon Python ran is timed from them */
  private seenMarks = false;
  /** the registration the header made (re-told when the hook says which signal takes samples) */
  private worker: WorkerEvent | null = null;

  constructor(
    private readonly path: string,
    private readonly onWorker: (w: WorkerEvent) => void,
    private readonly onDump: (d: DumpEvent) => void,
    private readonly onLastWords: (w: LastWordsEvent) => void = () => {},
    private readonly onSample: (s: StackSampleEvent) => void = () => {},
  ) {}

  /** the file's next line (without its newline) */
  line(line: string): void {
    const h = HEADER.exec(line);
    if (h !== null) {
      this.header(h[1]!);
      return;
    }
    if (MARKS_SEEN.test(line)) {
      this.seenMarks = true;
      return;
    }
    const samples = SAMPLES.exec(line);
    if (samples !== null) {
      if (this.worker === null) return;
      const { sampleSignal: _, ...w } = this.worker;
      this.worker = samples[1] === 'off' ? w : { ...w, sampleSignal: Number(samples[1]) };
      this.onWorker(this.worker);
      return;
    }
    if (this.lastWordsLine(line)) return;
    const r = REQUEST.exec(line);
    if (r !== null) {
      this.flush();
      if (this.cur?.sample) this.emit(this.cur, true);
      const sent = r[2] !== undefined && NUMBER.test(r[2]) ? Number(r[2]) : null;
      // (a box whose `date` printed nothing: the mark is the second word)
      const sample = r[3] === SAMPLE_MARK || r[2] === SAMPLE_MARK;
      this.cur = {
        id: r[1]!,
        ts: Number(r[1]),
        sentTs: sent,
        text: '',
        inPythonTs: null,
        seenTs: null,
        dirty: false,
        sample,
        done: false,
      };
      return;
    }
    const cur = this.cur;
    if (cur === null) return; // a dump nobody asked for (someone else's signal): not a request's
    const m = MARK.exec(line);
    if (m !== null) {
      if (m[1] === 'sampled') {
        // the watcher wrote the whole sample at once (the sample signal's path)
        if (cur.sample) this.emit(cur, true);
        return;
      }
      const key = m[1] === 'seen' ? 'seenTs' : 'inPythonTs';
      if (cur[key] === null) {
        cur[key] = Number(m[2]);
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
    // a sample is read whole or not at all (a dump cut mid-way could miss its collective frame)
    if (this.cur?.dirty && !this.cur.sample) this.emit(this.cur);
    if (this.words?.dirty) this.emitWords(this.words, false);
  }

  /** the end of the file: the last dump as far as it got */
  end(): void {
    if (this.cur !== null) this.emit(this.cur, true);
    // a fatal signal's record has no end marker: the process was gone after it
    if (this.words !== null) this.emitWords(this.words, this.words.fatal);
  }

  /**
   * A line of last words (a record's header, end or text): true when it was one. A record ends
   * the request being read: the process wrote nothing of that dump after the signal came.
   */
  private lastWordsLine(line: string): boolean {
    const head = LAST_WORDS_HEADER.exec(line);
    const fatal = head === null ? FATAL_HEADER.exec(line) : null;
    if (head !== null || fatal !== null) {
      this.flush();
      this.cur = null;
      if (this.words !== null) this.emitWords(this.words, this.words.fatal);
      const o = head === null ? null : parseJsonObject(head[1]!);
      const at = typeof o?.t === 'number' && Number.isFinite(o.t) ? o.t : null;
      const signal =
        fatal !== null ? fatalSignalName(fatal[1]!) : typeof o?.signal === 'string' ? o.signal : '?';
      this.words = { n: ++this.wordsCount, signal, at, fatal: fatal !== null, text: '', dirty: false };
      return true;
    }
    const w = this.words;
    if (w === null) return false;
    if (LAST_WORDS_END.test(line)) {
      this.emitWords(w, true);
      this.words = null;
      return true;
    }
    if (REQUEST.test(line)) {
      // nsa-dbg asked for a dump after a record without an end (SIGINT caught by the trainer and
      // a fatal signal's dump are complete when the next thing begins)
      this.emitWords(w, true);
      this.words = null;
      return false;
    }
    if (MARK.test(line)) return true;
    if (w.text.length < MAX_SEGMENT_CHARS) {
      w.text += `${line}\n`;
      w.dirty = true;
    }
    return true;
  }

  private emitWords(w: LastWordsSegment, complete: boolean): void {
    w.dirty = false;
    if (this.worker === null) return; // no header: whose words they are is unknown
    this.onLastWords({
      kind: 'last-words',
      name: `${this.path}@last-words-${w.n}`,
      file: this.path,
      rank: this.worker.rank,
      pid: this.worker.pid,
      signal: w.signal,
      at: w.at,
      fatal: w.fatal,
      threads: lastWordsThreads(w.text, this.main),
      complete,
    });
  }

  private header(json: string): void {
    const o = parseJsonObject(json);
    const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
    const rank = int(o?.rank);
    const pid = int(o?.pid);
    if (o === null || rank === null || pid === null) return;
    this.main = typeof o.main === 'string' ? o.main.toLowerCase() : null;
    this.worker = {
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
    };
    this.onWorker(this.worker);
  }

  /**
   * Whether the main thread ran Python right after the signal, as far as the marks say (undefined:
   * not known yet), and the time (box clock) after which no answer means it did not
   */
  private inPythonOf(s: Segment): { inPython: boolean | undefined; by: number } {
    const sent = s.sentTs ?? s.ts;
    // a hook that marks `seen` times Python from it; its late `seen` is waited for (SEEN_WAIT_S)
    const from = s.seenTs ?? (this.seenMarks ? null : sent);
    if (from === null) {
      // the in-python mark can come first (the main thread ran its handler before the watcher got
      // the GIL): in time from the send is in time whatever the watcher says
      const soon = s.inPythonTs !== null && s.inPythonTs - sent <= IN_PYTHON_S;
      return { inPython: soon ? true : undefined, by: sent + SEEN_WAIT_S };
    }
    const inPython = s.inPythonTs === null ? undefined : s.inPythonTs - from <= IN_PYTHON_S;
    return { inPython, by: from + IN_PYTHON_S };
  }

  /** a sample is handed on once: when both marks it waits for are in (or at the next request, the end) */
  private whole(s: Segment): boolean {
    return (
      s.inPythonTs !== null && (s.seenTs !== null || !this.seenMarks || this.inPythonOf(s).inPython === true)
    );
  }

  private emit(s: Segment, force = false): void {
    s.dirty = false;
    if (s.sample && s.done) return;
    if (s.sample && !force && !this.whole(s)) return;
    const d = parseStackDump(s.text, stackDumpName(this.path, s.id));
    if (s.sample) {
      s.done = true;
      s.text = '';
    }
    if (d === null) return;
    d.ts = s.ts;
    d.threads = d.threads.filter((t) => !isHookThread(t));
    for (const t of d.threads)
      if (this.main !== null && t.ident?.toLowerCase() === this.main) t.name = 'MainThread';
    const { inPython, by } = this.inPythonOf(s);
    if (inPython !== undefined) d.inPython = inPython;
    d.inPythonBy = by;
    if (!s.sample) this.onDump(d);
    else if (this.worker !== null) {
      const { rank, pid } = this.worker;
      this.onSample({ kind: 'stack-sample', rank, pid, ts: s.ts, id: s.id, dump: d });
    }
  }
}
