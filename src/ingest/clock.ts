/**
 * When each part of a file arrived, for files whose records carry no time of their own (the
 * trainer's output, its CSV table). nsa-dbg writes `nsa-dbg-clock.jsonl` into the run folder as it
 * reads: one record per chunk, `{"f": "stdout.log", "o": <offset after the chunk>, "t": <epoch s,
 * trainer clock>}`; `"t": null` for bytes that arrived with no time (read back after a re-attach).
 * A line's time is that of the first record whose offset covers its newline, so it does not depend
 * on how the bytes were chunked or interleaved with the clock's own.
 */
import { parseJsonObject } from '../util/json-object.js';

export interface ClockRecord {
  /** the file, by its path in the run folder */
  f: string;
  /** the file's size once the chunk was read */
  o: number;
  /** when (epoch seconds, trainer clock), or null: unknown */
  t: number | null;
}

export function parseClockLine(line: string): ClockRecord | null {
  const o = parseJsonObject(line);
  if (o === null || typeof o.f !== 'string' || typeof o.o !== 'number' || !Number.isInteger(o.o) || o.o < 0)
    return null;
  if (o.t !== null && (typeof o.t !== 'number' || !Number.isFinite(o.t))) return null;
  return { f: o.f, o: o.o, t: o.t as number | null };
}

export function clockLine(r: ClockRecord): string {
  return `${JSON.stringify({ f: r.f, o: r.o, t: r.t === null ? null : Math.round(r.t * 1000) / 1000 })}\n`;
}

/**
 * One timed file's bytes, handed on in the portions the clock covers, each with its time; bytes no
 * record covers yet wait (bounded by the file itself: the session writes the record first).
 */
export class TimedBytes {
  private readonly pending: Buffer[] = [];
  /** file offset of the first pending byte */
  private start = 0;
  private readonly records: Array<{ o: number; t: number | null }> = [];

  constructor(private readonly emit: (piece: Buffer, t: number | null) => void) {}

  bytes(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.pending.push(chunk);
    this.drain();
  }

  record(o: number, t: number | null): void {
    const last = this.records[this.records.length - 1];
    if (o <= this.start || (last !== undefined && o <= last.o)) return;
    this.records.push({ o, t });
    this.drain();
  }

  /** the end of the file: what no record covers is untimed */
  end(): void {
    for (const b of this.pending.splice(0)) this.emit(b, null);
  }

  private drain(): void {
    while (this.pending.length > 0 && this.records.length > 0) {
      const r = this.records[0]!;
      const head = this.pending[0]!;
      const take = Math.min(head.length, r.o - this.start);
      if (take === head.length) this.pending.shift();
      else this.pending[0] = head.subarray(take);
      this.emit(head.subarray(0, take), r.t);
      this.start += take;
      if (this.start >= r.o) this.records.shift();
    }
  }
}
