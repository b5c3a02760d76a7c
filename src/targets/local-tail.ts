import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import type { Disposable, TailHandle } from './target.js';

/**
 * Polls for new bytes and reads only those, so each byte is delivered once, in order, from any
 * offset. fs.watch is not used: it misses appends on some filesystems and cannot express "from
 * offset N".
 *
 * A file that only grows (the caller says so: a trainer's output, a rank's heartbeats) is kept open
 * between polls, up to a share of the process's file limit: a poll is then one read at the offset,
 * where by path it is a stat, an open, a read and a close. At 512 ranks that is a thousand polls a
 * second, and the path's system calls and their Stats objects were most of what following cost. A
 * file that may be rewritten or replaced (a small JSON written whole) is looked at by path, since an
 * open descriptor would keep reading the file it replaced.
 */
export class LocalTail implements TailHandle, Disposable {
  private readonly pace: Pace;
  /** the tick of the pace's clock at which this file is next looked at (a quiet one's backoff) */
  private due = 0;
  private pos: number;
  /** polls in a row that found nothing new: a quiet file is looked at less often (idle CPU) */
  private quiet = 0;
  /** the descriptor held between polls (an append-only file within the budget), else null */
  private fd: number | null = null;
  private disposed = false;
  constructor(
    private readonly path: string,
    private readonly onChunk: (chunk: Buffer) => void,
    from: number,
    private readonly pollMs: number,
    private readonly appendOnly = false,
  ) {
    this.pos = from;
    this.poll();
    this.pace = paceOf(pollMs);
    this.due = this.pace.join(this);
  }
  /**
   * A round of the tails' shared pace (`now`: its clock, in ticks of pollMs); returns the tick this
   * tail is next due at. While the file grows it is looked at every tick; after 3 quiet looks the
   * gap doubles up to 1 s: a run that prints nothing costs a look a second per file, and new bytes
   * are still seen within a second (the dashboard publishes once a second anyway). A file written in
   * bursts (a rank's stack log, one dump per request) is not looked at ten times a second for a
   * second after each: at 512 ranks that was a fifth of the engine's time while a hang was concluded.
   */
  tick(now: number): number {
    if (now < this.due) return this.due;
    const before = this.pos;
    this.poll();
    this.quiet = this.pos === before ? this.quiet + 1 : 0;
    const gap = Math.min(1000, this.pollMs * 2 ** Math.max(0, Math.min(4, this.quiet - 3)));
    this.due = now + Math.max(1, Math.ceil(gap / this.pollMs));
    return this.due;
  }
  get offset(): number {
    return this.pos;
  }
  /** read whatever is new right now (also used for a final drain before closing) */
  poll(): void {
    if (this.fd === null && this.appendOnly && !this.disposed && heldFds < heldFdBudget()) this.hold();
    if (this.fd !== null) this.readHeld(this.fd);
    else this.readByPath();
  }
  /** the held descriptor given back (the next look reads by path or holds it anew) */
  private release(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      // already unusable
    }
    heldFds--;
    this.fd = null;
  }
  private hold(): void {
    try {
      this.fd = openSync(this.path, 'r');
      heldFds++;
    } catch {
      // not there yet (or not readable): looked at by path until it is
    }
  }
  /** reads at the offset until a short read: no stat, no open */
  private readHeld(fd: number): void {
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, scratch, 0, scratch.length, this.pos);
      } catch {
        // an I/O error: the descriptor is given back and the next look tries again. Thrown from
        // the shared pace's round, it would have stopped every file of the pace
        this.release();
        return;
      }
      if (n <= 0) return;
      this.pos += n;
      // a copy: the receiver may keep the chunk, and the scratch is read into again
      this.onChunk(Buffer.from(scratch.subarray(0, n)));
      if (n < scratch.length) return;
    }
  }
  private readByPath(): void {
    let size: number;
    try {
      const st = statSync(this.path, { throwIfNoEntry: false });
      if (st === undefined) return;
      size = st.size;
    } catch {
      return;
    }
    if (size <= this.pos) return;
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return; // removed since the stat: looked at again next time
    }
    try {
      while (this.pos < size) {
        // 1 MiB reads: the size the parsers are benchmarked with (bench/run.ts)
        const buf = Buffer.allocUnsafe(Math.min(1 << 20, size - this.pos));
        let n: number;
        try {
          n = readSync(fd, buf, 0, buf.length, this.pos);
        } catch {
          break; // an I/O error: tried again at the next look
        }
        if (n <= 0) break;
        this.pos += n;
        this.onChunk(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
  }
  async drain(): Promise<void> {
    this.poll();
  }
  dispose(): void {
    if (!this.disposed) this.pace.leave(this);
    this.disposed = true;
    this.poll();
    this.release();
  }
}

/**
 * The tails that look at the same pace share one timer: a 512-rank run's heartbeat files are looked
 * at together, one wake-up of the process every half second, where a timer each woke it a hundred
 * times a second, each wake-up costing more than the look it made. The timer is set for the next
 * tick at which some tail is due, so quiet files (all backed off to a second) wake it once a second.
 */
class Pace {
  private readonly members = new Set<LocalTail>();
  private timer: NodeJS.Timeout | null = null;
  private readonly start = performance.now();
  /** the tick the timer is set for (Infinity: none set) */
  private wakeAt = Number.POSITIVE_INFINITY;
  constructor(private readonly ms: number) {}
  /** a new tail, first due at the next tick (which is returned) */
  join(t: LocalTail): number {
    this.members.add(t);
    const at = this.clock() + 1;
    this.wake(at);
    return at;
  }
  /** the pace's clock: whole ticks of `ms` since it began (real time, so a late timer skips none) */
  private clock(): number {
    return Math.floor((performance.now() - this.start) / this.ms);
  }
  leave(t: LocalTail): void {
    if (!this.members.delete(t) || this.members.size > 0) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    paces.delete(this.ms);
  }
  private wake(at: number): void {
    if (at >= this.wakeAt) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.wakeAt = at;
    this.timer = setTimeout(() => this.round(), Math.max(0, this.start + at * this.ms - performance.now()));
    this.timer.unref?.();
  }
  private round(): void {
    const now = Math.max(this.wakeAt, this.clock());
    this.wakeAt = Number.POSITIVE_INFINITY;
    this.timer = null;
    let next = Number.POSITIVE_INFINITY;
    // a member that ends during its tick leaves the set: iteration goes on with the rest
    for (const m of this.members) next = Math.min(next, m.tick(now));
    if (this.members.size > 0) this.wake(next);
  }
}

const paces = new Map<number, Pace>();

function paceOf(ms: number): Pace {
  let p = paces.get(ms);
  if (p === undefined) {
    p = new Pace(ms);
    paces.set(ms, p);
  }
  return p;
}

/** one buffer for every held file's reads (1 MiB: the size the parsers are benchmarked with) */
const scratch = Buffer.allocUnsafe(1 << 20);

/** descriptors held by tails in this process */
let heldFds = 0;
let budget: number | null = null;

/** how many descriptors tails may hold: a quarter of the soft limit, so nothing else runs short */
export function heldFdBudget(): number {
  budget ??= Math.min(4096, Math.floor(openFileLimit() / 4));
  return budget;
}

/** the process's soft limit on open files (Node raises it to the hard limit at start-up) */
function openFileLimit(): number {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (m?.[1] !== undefined) return Number(m[1]);
  } catch {
    // not Linux: the common default
  }
  return 1024;
}

/** descriptors held now (for tests) */
export function heldFdCount(): number {
  return heldFds;
}
