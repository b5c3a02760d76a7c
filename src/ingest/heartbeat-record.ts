/**
 * The BeatEvent object the heartbeat reader produces, and the general (slow but complete) way to get
 * one from any valid JSON line. `extra` (every key the engine does not use) is parsed only when first
 * read: on a million-line file almost nobody reads it, and parsing it eagerly would cost more than
 * everything else together. It is a getter on the class, so `{ ...beat }` leaves it out; use
 * `beat.extra` (or JSON.stringify, which includes it) when copying.
 */
import type { BeatEvent } from './events.js';
import { decodeNumber, SCAN_ESCAPED, SCAN_EXTRA_KEYS, scanRecord } from './json-bytes.js';
import { parsePythonJson } from './python-json.js';

/** Keys mapped onto BeatEvent fields; all others end up in `extra`. Slot order is used below. */
export const CONSUMED_KEYS = [
  'ts',
  'pid',
  'rank',
  'step',
  'msg',
  'phase',
  'gpu_mem_alloc',
  'gpu_mem_reserved',
  'loss',
  'toks_per_s',
] as const;

export class HeartbeatRecord implements BeatEvent {
  // `declare` + plain assignments: a million of these are built per file, and class-field
  // definitions are slower to construct than assignments in the constructor
  declare kind: 'beat';
  declare rank: number;
  declare step: number;
  declare ts: number;
  declare pid: number | undefined;
  declare msg: string;
  declare phase: string | undefined;
  declare gpuMemAllocMiB: number | undefined;
  declare gpuMemReservedMiB: number | undefined;
  declare loss: number | undefined;
  declare toksPerS: number | undefined;
  /** the record's JSON text until `extra` is first read, then the parsed extra keys */
  #lazy: string | Record<string, unknown> | null;

  constructor(
    rank: number,
    step: number,
    ts: number,
    pid: number | undefined,
    msg: string,
    phase: string | undefined,
    gpuMemAllocMiB: number | undefined,
    gpuMemReservedMiB: number | undefined,
    loss: number | undefined,
    toksPerS: number | undefined,
    /** the record's JSON text, or null when it has no other keys */
    source: string | null,
  ) {
    this.#lazy = source;
    this.kind = 'beat';
    this.rank = rank;
    this.step = step;
    this.ts = ts;
    this.pid = pid;
    this.msg = msg;
    this.phase = phase;
    this.gpuMemAllocMiB = gpuMemAllocMiB;
    this.gpuMemReservedMiB = gpuMemReservedMiB;
    this.loss = loss;
    this.toksPerS = toksPerS;
  }

  get extra(): Record<string, unknown> {
    if (this.#lazy === null || typeof this.#lazy === 'string') {
      const all = this.#lazy === null ? {} : (parsePythonJson(this.#lazy) as Record<string, unknown>);
      for (const k of CONSUMED_KEYS) delete all[k];
      this.#lazy = all;
    }
    return this.#lazy;
  }

  toJSON(): BeatEvent {
    // the constructor's own fields, in its order, then the lazy `extra`
    return { ...this, extra: this.extra };
  }
}

const KEYS = CONSUMED_KEYS.map((k) => Buffer.from(k, 'ascii'));
const slots = new Int32Array(CONSUMED_KEYS.length * 2);

function slotValue(buf: Buffer, slot: number, escaped: boolean): unknown {
  const s = slots[slot * 2]!;
  if (s < 0) return undefined;
  const e = slots[slot * 2 + 1]!;
  const c = buf[s]!;
  if (c === 34)
    return escaped ? JSON.parse(buf.toString('utf8', s, e)) : buf.toString('latin1', s + 1, e - 1);
  if (c === 45 || (c >= 48 && c <= 57) || c === 78 || c === 73) return decodeNumber(buf, s, e);
  if (c === 116) return true;
  if (c === 102) return false;
  if (c === 110) return null;
  return undefined;
}

export function numberOrUndefined(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

/**
 * Bytes [s, e) of one line → record, or null when it is not a heartbeat record: not exactly one JSON
 * object (Python's NaN/Infinity allowed, UTF-8 must be valid), or no numeric `ts` / string `msg`, or
 * a non-integer `step`. `defaultRank` is used only when the record has no integer `rank`.
 */
export function parseHeartbeatBytes(
  buf: Buffer,
  s: number,
  e: number,
  defaultRank = 0,
): HeartbeatRecord | null {
  const flags = scanRecord(buf, s, e, KEYS, slots);
  if (flags === 0) return null;
  const escaped = (flags & SCAN_ESCAPED) !== 0;
  const ts = slotValue(buf, 0, false);
  const msg = slotValue(buf, 4, escaped);
  if (typeof ts !== 'number' || !Number.isFinite(ts) || typeof msg !== 'string') return null;
  const stepRaw = slotValue(buf, 3, false);
  const step = stepRaw === undefined ? 0 : stepRaw;
  if (typeof step !== 'number' || !Number.isInteger(step)) return null;
  const rankRaw = slotValue(buf, 2, false);
  const rank = typeof rankRaw === 'number' && Number.isInteger(rankRaw) ? rankRaw : defaultRank;
  const phase = slotValue(buf, 5, escaped);
  const source = (flags & SCAN_EXTRA_KEYS) !== 0 ? buf.toString('utf8', s, e) : null;
  return new HeartbeatRecord(
    rank,
    step,
    ts,
    numberOrUndefined(slotValue(buf, 1, false)),
    msg,
    typeof phase === 'string' ? phase : undefined,
    numberOrUndefined(slotValue(buf, 6, false)),
    numberOrUndefined(slotValue(buf, 7, false)),
    numberOrUndefined(slotValue(buf, 8, false)),
    numberOrUndefined(slotValue(buf, 9, false)),
    source,
  );
}
