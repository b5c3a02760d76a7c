/**
 * The run-folder reader: the only place that turns a run folder's bytes into evidence. It takes
 * `(path in the folder, chunk)` in any chunking and any interleaving of files — live, as followers
 * and mirrors deliver them; offline (`nsa-dbg analyze`, a notebook cell), file after file — and
 * feeds one evidence sink; `end()` flushes what is left. Live and offline are this same code, so
 * they cannot disagree. What each file is comes from run-files.ts; what the evidence makes of the
 * events is src/analysis/'s business.
 */

import { parseClockLine, TimedBytes } from './clock.js';
import type { BeatEvent, IngestEvent } from './events.js';
import { type FlightRecorderEvent, parseFlightRecorder } from './flight-recorder.js';
import { HeartbeatReader } from './heartbeat.js';
import { HeldOutput } from './held-output.js';
import { LineSplitter } from './line-splitter.js';
import { parseNvidiaSmiLine } from './nvidia-smi.js';
import { type At, streamName } from './order.js';
import { parseProbeLine } from './probes.js';
import type { EvidenceSink, ReaderOptions, ReaderView } from './reader-view.js';
import {
  classifyRunPath,
  heartbeatFileRank,
  MAX_DUMP_BYTES,
  MAX_WHOLE_BYTES,
  type RunFileKind,
  type RunLayout,
} from './run-files.js';
import { StackLogReader } from './stack-log.js';
import { parseStackDump } from './stackdump.js';

const TABLE_ROW = /^(\d+),([^,]+),([^,]+),([^,]+)$/;
/** a Flight Recorder dump is some kilobytes; past this it is not read */
const MAX_BINARY_BYTES = 16 << 20;
/** dump texts held for re-parsing as they grow (the newest; older dumps are complete) */
const MAX_DUMP_TEXTS = 64;

interface LineStream {
  kind: RunFileKind;
  splitter: LineSplitter;
  seq: number;
  /** timed files: their bytes as the clock covers them */
  timed?: TimedBytes;
  /** the time of the last portion read (a partial last line's, at the end) */
  lastT?: number | null;
}

/** the value of `key` in `map`, made and kept there on first use */
function kept<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    map.set(key, v);
  }
  return v;
}

/** a heartbeat file: its reader, and how many of its skipped lines the sink was told */
type BeatStream = { reader: HeartbeatReader; stream: string; seq: number; counted: number };

export class RunFolderReader {
  private readonly layout: RunLayout;
  private readonly view: ReaderView;
  private readonly beats = new Map<string, BeatStream>();
  private readonly lines = new Map<string, LineStream>();
  private readonly texts = new Map<string, string>();
  private readonly dumpTexts = new Map<string, { text: string; parsed: number }>();
  /** dumps whose text was let go (MAX_DUMP_TEXTS newer ones grew since) */
  private readonly doneDumps = new Set<string>();
  private readonly outputs = new Map<string, HeldOutput>();
  private readonly stackLogs = new Map<string, StackLogReader>();
  private readonly binaries = new Map<string, { bytes: Buffer; done: boolean }>();
  private ended = false;

  constructor(
    private readonly sink: EvidenceSink,
    private readonly opts: ReaderOptions = {},
  ) {
    this.layout = opts.layout ?? {};
    this.view = opts.view ?? {};
  }

  /** heartbeat files read so far (one per rank that writes them) */
  get heartbeatFiles(): number {
    return this.beats.size;
  }

  /** A chunk of a file of the run folder (path relative to it, `/` between parts). */
  push(path: string, chunk: Buffer, kind: RunFileKind | null = classifyRunPath(path, this.layout)): void {
    if (kind === null || this.ended) return;
    switch (kind) {
      case 'heartbeat':
        this.beatChunk(path, chunk);
        return;
      case 'dump':
        this.dumpChunk(path, chunk);
        return;
      case 'flight-recorder':
        this.flightRecorder(path, chunk);
        return;
      case 'whole': {
        const before = this.texts.get(path) ?? '';
        if (before.length < MAX_WHOLE_BYTES) this.wholeFile(path, before + chunk.toString('utf8'));
        return;
      }
      case 'nodes':
        this.sink.nodes.push(chunk.toString('utf8'));
        for (const o of this.outputs.values()) o.release();
        return;
      default: {
        // a line file (stdout, table: timed where the folder keeps a clock)
        const s = this.lineStream(path, kind);
        if (s.timed !== undefined) s.timed.bytes(chunk);
        else this.piece(path, s, chunk, undefined);
        if (kind === 'stack-log') this.stackLog(path).flush();
      }
    }
  }

  /**
   * A small whole file's new content, rewritten in place (a trainer's out_dir reused from run to
   * run): it replaces what was read of it. Other kinds of file only grow; for them this is a chunk.
   */
  replace(path: string, content: Buffer): void {
    if (this.ended) return;
    if (classifyRunPath(path, this.layout) !== 'whole') this.push(path, content);
    else this.wholeFile(path, content.subarray(0, MAX_WHOLE_BYTES).toString('utf8'));
  }

  /** a small whole file's content so far */
  private wholeFile(path: string, text: string): void {
    this.texts.set(path, text);
    this.sink.setFile(path, text);
    this.view.file?.(path, text);
  }

  /** The end of every file: partial last lines and held output are read now. */
  end(): void {
    if (this.ended) return;
    for (const s of this.lines.values()) s.timed?.end();
    for (const [path, s] of this.lines) {
      for (const line of s.splitter.flush()) this.lineOf(path, s, line, s.lastT ?? undefined);
    }
    for (const o of this.outputs.values()) o.end();
    for (const l of this.stackLogs.values()) l.end();
    for (const b of this.beats.values()) this.beatEvents(b, b.reader.flush());
    this.sink.nodes.push('\n');
    this.settle();
    this.ended = true;
  }

  private lineStream(path: string, kind: RunFileKind): LineStream {
    return kept(this.lines, path, () => {
      // a trainer's output: its progress bars' redraws are progress as they arrive
      const s: LineStream = { kind, splitter: new LineSplitter({ progress: kind === 'stdout' }), seq: 0 };
      if (this.opts.timed && (kind === 'stdout' || kind === 'table'))
        s.timed = new TimedBytes((piece, t) => this.piece(path, s, piece, t));
      return s;
    });
  }

  /** bytes of a line file that arrived at `t` (undefined: the folder keeps no clock) */
  private piece(path: string, s: LineStream, piece: Buffer, t: number | null | undefined): void {
    s.lastT = t;
    const ts = t ?? undefined;
    for (const line of s.splitter.push(piece)) this.lineOf(path, s, line, ts);
  }

  /** the output of one stdout file: parsed in order, lines of agents not yet placed held back */
  private output(path: string): HeldOutput {
    return kept(this.outputs, path, () => {
      const stream = streamName('output', path);
      let seq = 0;
      return new HeldOutput({
        stepRegex: this.opts.stepRegex,
        nodes: this.layout.agentLabels ? this.sink.nodes : undefined,
        onLine: (line) => this.view.line?.(line),
        onParsed: (line) => this.view.outputLine?.(line),
        onEvent: (e, line) => this.emit(e, { stream, seq: seq++ }, line),
        onSkipped: (n) => this.sink.addSkipped(n),
      });
    });
  }

  /** a line of a line file (`ts`: when it arrived, where the folder keeps a clock) */
  private lineOf(path: string, s: LineStream, line: string, ts?: number): void {
    const kind = s.kind;
    if (kind === 'stdout') {
      this.output(path).push(line, ts);
      return;
    }
    if (kind === 'stack-log') {
      this.stackLog(path).line(line);
      return;
    }
    if (line.trim() === '') return;
    if (kind === 'clock') {
      const r = parseClockLine(line);
      if (r === null) this.sink.addSkipped(1);
      else {
        const k = classifyRunPath(r.f, this.layout);
        if (k === 'stdout' || k === 'table') this.lineStream(r.f, k).timed?.record(r.o, r.t);
      }
    } else if (kind === 'probes') {
      const e = parseProbeLine(line);
      if (e === null) this.sink.addSkipped(1);
      else this.emit(e, { stream: streamName('probe', path), seq: s.seq++ });
    } else if (kind === 'table') {
      const m = TABLE_ROW.exec(line.trim());
      // the header and other rows that are not step rows are the table's own business
      if (m !== null) this.sink.addTableRow(Number(m[1]), Number(m[2]), Number(m[4]), ts);
    } else if (kind === 'gpu-csv') {
      const rec = parseNvidiaSmiLine(line);
      if (rec !== null && 'index' in rec) this.sink.addGpuSample(rec);
    }
  }

  /** a Flight Recorder dump (binary): read once it is whole */
  private flightRecorder(path: string, chunk: Buffer): void {
    const cur = this.binaries.get(path) ?? { bytes: Buffer.alloc(0), done: false };
    this.binaries.set(path, cur);
    if (cur.done || cur.bytes.length > MAX_BINARY_BYTES) return;
    cur.bytes = Buffer.concat([cur.bytes, chunk]);
    let e: FlightRecorderEvent | null;
    try {
      e = parseFlightRecorder(cur.bytes, path);
    } catch {
      cur.done = true;
      this.sink.addSkipped(1); // not a dump after all
      return;
    }
    if (e === null) return; // more bytes to come
    cur.done = true;
    this.emit(e, { stream: streamName('file', path), seq: 0 });
  }

  private stackLog(path: string): StackLogReader {
    return kept(this.stackLogs, path, () => {
      const stream = streamName('dump', path);
      const emit = (e: IngestEvent) => this.emit(e, { stream, seq: 0 });
      return new StackLogReader(
        path,
        emit,
        (d) => {
          emit(d);
          this.view.dump?.(d.file, d);
        },
        emit,
        // a straggler sample: counted by the evidence, never shown or kept as a dump
        emit,
      );
    });
  }

  private beatChunk(path: string, chunk: Buffer): void {
    const b = kept(this.beats, path, () => {
      const reader = new HeartbeatReader(heartbeatFileRank(path.slice(path.lastIndexOf('/') + 1)));
      return { reader, stream: streamName('beat', path), seq: 0, counted: 0 };
    });
    this.beatEvents(b, b.reader.push(chunk));
  }

  /** a heartbeat file's records, and its lines that were none (skipped) */
  private beatEvents(b: BeatStream, events: BeatEvent[]): void {
    for (const e of events) this.emit(e, { stream: b.stream, seq: b.seq++ });
    const n = b.reader.skippedLines - b.counted;
    if (n > 0) this.sink.addSkipped(n);
    b.counted = b.reader.skippedLines;
  }

  /**
   * A dump file grew: it is re-parsed whole, under its path (hosts' dump names repeat). A dump that
   * arrives in many small pieces is re-parsed each time it has doubled (and whenever the reader
   * settles), not on every piece: parsing stays linear in its size.
   */
  private dumpChunk(path: string, chunk: Buffer): void {
    if (this.doneDumps.has(path)) return; // its text was let go: what was parsed of it stays
    const cur = this.dumpTexts.get(path) ?? { text: '', parsed: 0 };
    if (cur.text.length >= MAX_DUMP_BYTES) return;
    cur.text = (cur.text + chunk.toString('utf8')).slice(0, MAX_DUMP_BYTES);
    this.dumpTexts.delete(path);
    this.dumpTexts.set(path, cur);
    if (this.dumpTexts.size > MAX_DUMP_TEXTS) {
      const [oldest, o] = this.dumpTexts.entries().next().value!;
      this.parseDump(oldest, o);
      this.dumpTexts.delete(oldest);
      this.doneDumps.add(oldest);
    }
    if (cur.parsed * 2 <= cur.text.length) this.parseDump(path, cur);
  }

  private parseDump(path: string, cur: { text: string; parsed: number }): void {
    if (cur.parsed === cur.text.length) return;
    cur.parsed = cur.text.length;
    const d = parseStackDump(cur.text, path);
    if (d === null) return;
    this.emit(d, { stream: streamName('dump', path), seq: 0 });
    this.view.dump?.(path, d);
  }

  /** Everything read so far is in the evidence (dumps that grew since their last parse are parsed). */
  settle(): void {
    for (const [path, cur] of this.dumpTexts) this.parseDump(path, cur);
  }

  private emit(e: IngestEvent, at: At, line?: string): void {
    this.sink.addEvent(e, at);
    this.view.event?.(e, line);
  }
}
