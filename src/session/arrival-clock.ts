/**
 * Writes the run folder's clock (src/ingest/clock.ts) as the session reads: for every chunk of a
 * file whose records carry no time (the output, the CSV table), a record of the offset it ends at
 * and when it arrived, in the trainer's clock. The record is written to the local evidence folder
 * and handed to the reader before the chunk itself, so the reader times the chunk's lines at once,
 * and `analyze` of the folder later reads the same record.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ClockRecord, clockLine, parseClockLine } from '../ingest/clock.js';
import { CLOCK_FILE, runFileKind } from '../ingest/run-files.js';

export class ArrivalClock {
  /** bytes seen per timed file, and the offset the clock file already covers */
  private readonly size = new Map<string, number>();
  private readonly covered = new Map<string, number>();
  /** an attach: the first chunk of each file is what was written while nobody watched */
  private readonly unseen: Set<string> | null;

  /**
   * `dir`: the local evidence folder (null: nothing is written, e.g. a test without a folder).
   * `attached`: the run was started earlier; what it wrote meanwhile arrives now, untimed.
   */
  constructor(
    private readonly dir: string | null,
    attached = false,
  ) {
    this.unseen = attached ? new Set() : null;
    for (const r of this.existing()) this.covered.set(r.f, Math.max(this.covered.get(r.f) ?? 0, r.o));
  }

  /** the records an earlier session wrote (read back first on an attach) */
  existing(): ClockRecord[] {
    if (this.dir === null) return [];
    let text = '';
    try {
      text = readFileSync(join(this.dir, CLOCK_FILE), 'utf8');
    } catch {
      return [];
    }
    return text
      .split('\n')
      .map(parseClockLine)
      .filter((r): r is ClockRecord => r !== null);
  }

  /** whether a file of the folder (by path) is timed by this clock */
  static times(path: string): boolean {
    const kind = runFileKind(path.slice(path.lastIndexOf('/') + 1));
    return kind === 'stdout' || kind === 'table';
  }

  /** a chunk of `path` arrived at `nowS` (trainer clock): the clock bytes for the reader, or null */
  arrived(path: string, chunk: Buffer, nowS: number): Buffer | null {
    if (!ArrivalClock.times(path)) return null;
    const end = (this.size.get(path) ?? 0) + chunk.length;
    this.size.set(path, end);
    if (end <= (this.covered.get(path) ?? 0)) return null; // read back: an earlier session timed it
    this.covered.set(path, end);
    let t: number | null = nowS;
    if (this.unseen !== null && !this.unseen.has(path)) {
      this.unseen.add(path);
      t = null;
    }
    const line = clockLine({ f: path, o: end, t });
    if (this.dir !== null) {
      try {
        appendFileSync(join(this.dir, CLOCK_FILE), line);
      } catch {
        // a folder gone read-only: the reader still gets the record; `analyze` will read untimed lines
      }
    }
    return Buffer.from(line);
  }
}
