/**
 * Where a fact of a run folder came from: its stream (one file) and its place in that stream. The
 * files of a folder arrive interleaved in any way, live or offline; this order does not depend on
 * that, so "the first" of anything is the same whoever reads the folder.
 */
export interface At {
  stream: string;
  seq: number;
}

/** a canonical order over facts of all streams: by stream, then place (deterministic, not arrival) */
export function compareAt(a: At, b: At): number {
  return a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : a.seq - b.seq;
}

/**
 * Stream names, so that the canonical order reads the output first (what the user saw), then the
 * heartbeats, then small files and dumps: `0:stdout.log`, `1:heartbeat_rank3.jsonl`, …
 */
export type StreamKind = 'output' | 'beat' | 'file' | 'dump' | 'probe';
const STREAM_PREFIX: Record<StreamKind, string> = {
  output: '0',
  beat: '1',
  file: '2',
  dump: '3',
  probe: '4',
};

export function streamName(kind: StreamKind, path: string): string {
  return `${STREAM_PREFIX[kind]}:${path}`;
}
