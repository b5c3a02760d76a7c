/**
 * Reads a rank's stack log (the format: src/ingest/stack-log-format.ts) into dumps, straggler
 * samples, last words and the worker's registration. Each request's dump is the text after its
 * `# request` line, read again as more of it arrives; a sample is handed on once, when whole.
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
import {
  HEADER,
  IN_PYTHON_S,
  MARK,
  MARKS_SEEN,
  MAX_SEGMENT_CHARS,
  NUMBER,
  REQUEST,
  SAMPLE_MARK,
  SAMPLES,
  SEEN_WAIT_S,
  stackDumpName,
} from './stack-log-format.js';
import { parseStackDump } from './stackdump.js';

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
