/**
 * What the run-folder reader (run-folder.ts) is given: the sink it feeds (the run's evidence), the
 * views that watch it (the live dashboard's log, charts and dump pane; a run's digest) and its
 * options.
 */
import type { DumpEvent, GpuSample, IngestEvent } from './events.js';
import type { NodeMap } from './node-map.js';
import type { At } from './order.js';
import type { RunLayout } from './run-files.js';

/** What the reader feeds: the run's evidence (src/analysis/evidence.ts implements it). */
export interface EvidenceSink {
  addEvent(e: IngestEvent, at: At): void;
  addTableRow(step: number, loss: number, toksPerS: number, ts?: number): void;
  addGpuSample(g: GpuSample): void;
  setFile(path: string, content: string): void;
  addSkipped(n: number): void;
  readonly nodes: NodeMap;
}

/** What a view may want besides the evidence (the live dashboard's log, charts and dump pane). */
export interface ReaderView {
  /** a line of the trainer's output as it arrives (before parsing: the log pane) */
  line?(text: string): void;
  /** a line of the output as it is parsed, before its events (in order, also when held back) */
  outputLine?(text: string): void;
  /** an event, after the evidence took it; `line`: the output line it came from */
  event?(e: IngestEvent, line?: string): void;
  /** a dump file was (re)parsed */
  dump?(path: string, d: DumpEvent): void;
  /** a small whole file's content so far */
  file?(path: string, content: string): void;
}

const VIEW_METHODS = ['line', 'outputLine', 'event', 'dump', 'file'] as const satisfies (keyof ReaderView)[];

/** several views of one reader, each told everything in the same order */
export function views(...list: ReaderView[]): ReaderView {
  const all = list as Array<Record<keyof ReaderView, ((a: unknown, b?: unknown) => void) | undefined>>;
  const out: ReaderView = {};
  for (const m of VIEW_METHODS) {
    out[m] = (a: unknown, b?: unknown) => {
      for (const v of all) v[m]?.(a, b);
    };
  }
  return out;
}

export interface ReaderOptions {
  layout?: RunLayout;
  /** a lane's step regex for trainers with another log format */
  stepRegex?: RegExp;
  view?: ReaderView;
  /**
   * nsa-dbg's clock of the folder (nsa-dbg-clock.jsonl) is part of it: output and CSV lines wait for
   * their arrival time. Live: the session writes the clock; offline: when the folder has one.
   */
  timed?: boolean;
}
