/**
 * A validating JSON scanner over raw bytes, for the heartbeat hot path. It checks the whole grammar
 * (plus Python's NaN / Infinity / -Infinity and well-formed UTF-8 inside strings) but builds no
 * objects: it only records where the values of a few wanted top-level keys lie. Decoding those few
 * values is left to the caller, so a 700-byte progress record costs one pass over its bytes instead
 * of a full JSON.parse. Everything it accepts, parsePythonJson accepts too, with the same values.
 */

const MAX_DEPTH = 64;

/** Result flags of scanRecord. */
export const SCAN_OK = 1;
/** the top-level object has keys other than the wanted ones */
export const SCAN_EXTRA_KEYS = 4;
/** some wanted string value contains a backslash escape or non-ASCII bytes */
export const SCAN_ESCAPED = 8;

/** the bytes after a backslash that make a two-byte escape: " \\ / b f n r t */
const SIMPLE_ESCAPE = new Set([34, 92, 47, 98, 102, 110, 114, 116]);

// Byte classes inside a string: 0 plain ASCII, 1 quote, 2 backslash, 3 control, 4 non-ASCII.
const STR_CLASS = new Uint8Array(256);
for (let c = 0; c < 256; c++) STR_CLASS[c] = c === 34 ? 1 : c === 92 ? 2 : c < 32 ? 3 : c >= 128 ? 4 : 0;

const OBJ = 1;
const ARR = 2;
const stack = new Uint8Array(MAX_DEPTH + 1);

function skipWs(b: Uint8Array, i: number, stop: number): number {
  while (i < stop) {
    const c = b[i]!;
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
    i++;
  }
  return i;
}

function skipDigits(b: Uint8Array, i: number, stop: number): number {
  while (i < stop) {
    const c = b[i]!;
    if (c < 48 || c > 57) break;
    i++;
  }
  return i;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102));
}

/** One multi-byte UTF-8 sequence at i (lead byte c); returns the index after it, or -1. */
function scanUtf8(b: Uint8Array, i: number, end: number, c: number): number {
  let extra: number;
  let min: number;
  if (c >= 0xc2 && c <= 0xdf) {
    extra = 1;
    min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    extra = 2;
    min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    extra = 3;
    min = 0x10000;
  } else return -1;
  let cp = c & (0x3f >> extra);
  for (let k = 1; k <= extra; k++) {
    const cc = i + k < end ? b[i + k]! : 0;
    if ((cc & 0xc0) !== 0x80) return -1;
    cp = (cp << 6) | (cc & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
  return i + extra + 1;
}

/** The slow part of a string (escapes, non-ASCII): i at the byte after the quote. -1 if invalid. */
function scanStringSlow(b: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = b[i]!;
    const cls = STR_CLASS[c]!;
    if (cls === 0) i++;
    else if (cls === 1) return i + 1;
    else if (cls === 2) {
      const e = b[i + 1];
      if (e === 117) {
        if (!isHex(b[i + 2]) || !isHex(b[i + 3]) || !isHex(b[i + 4]) || !isHex(b[i + 5]) || i + 5 >= end)
          return -1;
        i += 6;
      } else if (e !== undefined && SIMPLE_ESCAPE.has(e)) i += 2;
      else return -1;
    } else if (cls === 4) {
      i = scanUtf8(b, i, end, c);
      if (i < 0) return -1;
    } else return -1;
  }
  return -1;
}

function matchWord(b: Uint8Array, i: number, end: number, word: string): boolean {
  if (i + word.length > end) return false;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return false;
  return true;
}

function keySlot(keys: readonly Uint8Array[], b: Uint8Array, ks: number, ke: number): number {
  const len = ke - ks;
  outer: for (let s = 0; s < keys.length; s++) {
    const k = keys[s]!;
    if (k.length !== len) continue;
    for (let j = 0; j < len; j++) if (k[j] !== b[ks + j]) continue outer;
    return s;
  }
  return -1;
}

/**
 * Validate bytes [start, stop) as exactly one JSON object (surrounding whitespace allowed) and record
 * the value span of each wanted top-level key (`keys`, as bytes, indexed by slot) in `slots` (start at 2·slot, end at 2·slot+1; -1 when
 * absent or not a scalar). Returns 0 when invalid, else SCAN_OK | the other flags.
 * One flat loop with local state: this runs once per heartbeat line.
 */
export function scanRecord(
  b: Uint8Array,
  start: number,
  stop: number,
  keys: readonly Uint8Array[],
  slots: Int32Array,
): number {
  let flags = SCAN_OK;
  slots.fill(-1);
  let i = skipWs(b, start, stop);
  let c = 0;
  if (i >= stop || b[i] !== 123) return 0;
  stack[1] = OBJ;
  let depth = 1;
  i++;
  // slot of the top-level key whose value is being read (-1: not wanted / nested)
  let slot = -1;
  let expectKey = true; // inside an object, before a key (or '}' right after '{')
  let allowClose = true; // '}' / ']' allowed here (empty container)
  for (;;) {
    i = skipWs(b, i, stop);
    if (i >= stop) return 0;
    c = b[i]!;
    if (expectKey) {
      if (c === 125 && allowClose) {
        i++;
      } else {
        if (c !== 34) return 0;
        const ks = i + 1;
        let plain = true;
        i = ks;
        while (i < stop && STR_CLASS[b[i]!] === 0) i++;
        if (b[i] !== 34) {
          plain = false;
          i = scanStringSlow(b, i, stop);
          if (i < 0) return 0;
        } else i++;
        if (depth === 1) {
          slot = plain ? keySlot(keys, b, ks, i - 1) : -1;
          if (slot < 0) flags |= SCAN_EXTRA_KEYS;
        }
        i = skipWs(b, i, stop);
        if (b[i] !== 58) return 0;
        i++;
        i = skipWs(b, i, stop);
        if (i >= stop) return 0;
        c = b[i]!;
        expectKey = false;
        allowClose = false;
        // fall through to read the value
      }
    }
    if (!expectKey) {
      const vs = i;
      if (c === 34) {
        i++;
        while (i < stop && STR_CLASS[b[i]!] === 0) i++;
        if (b[i] !== 34) {
          i = scanStringSlow(b, i, stop);
          if (i < 0) return 0;
          if (depth === 1 && slot >= 0) flags |= SCAN_ESCAPED;
        } else i++;
      } else if (c === 45 && b[i + 1] === 73) {
        if (!matchWord(b, i + 1, stop, 'Infinity')) return 0;
        i += 9;
      } else if (c === 45 || (c >= 48 && c <= 57)) {
        if (c === 45) i++;
        c = b[i]!;
        if (c === 48) i++;
        else if (c >= 49 && c <= 57) {
          i++;
          i = skipDigits(b, i, stop);
        } else return 0;
        if (b[i] === 46) {
          i++;
          const d = i;
          i = skipDigits(b, i, stop);
          if (i === d) return 0;
        }
        c = b[i]!;
        if (c === 101 || c === 69) {
          i++;
          c = b[i]!;
          if (c === 43 || c === 45) i++;
          const d = i;
          i = skipDigits(b, i, stop);
          if (i === d) return 0;
        }
      } else if (c === 123 || c === 91) {
        if (depth >= MAX_DEPTH) return 0;
        if (depth === 1) slot = -1;
        depth++;
        stack[depth] = c === 123 ? OBJ : ARR;
        i++;
        expectKey = c === 123;
        allowClose = true;
        if (!expectKey) {
          i = skipWs(b, i, stop);
          if (b[i] === 93) {
            i++;
            depth--;
          } else continue;
        } else continue;
      } else if (c === 116 && matchWord(b, i, stop, 'true')) i += 4;
      else if (c === 102 && matchWord(b, i, stop, 'false')) i += 5;
      else if (c === 110 && matchWord(b, i, stop, 'null')) i += 4;
      else if (c === 78 && matchWord(b, i, stop, 'NaN')) i += 3;
      else if (c === 73 && matchWord(b, i, stop, 'Infinity')) i += 8;
      else return 0;
      if (depth === 1 && slot >= 0) {
        // a repeated key: JSON.parse keeps the last value, and so do we
        slots[slot * 2] = vs;
        slots[slot * 2 + 1] = i;
      }
    }
    // after a value (or after an empty object's '}'): ',' or the container's close
    for (;;) {
      i = skipWs(b, i, stop);
      if (i >= stop) return 0;
      c = b[i]!;
      const top = stack[depth]!;
      if (c === 44) {
        i++;
        expectKey = top === OBJ;
        allowClose = false;
        break;
      }
      if ((c === 125 && top === OBJ) || (c === 93 && top === ARR)) {
        i++;
        depth--;
        if (depth === 0) {
          i = skipWs(b, i, stop);
          return i === stop ? flags : 0;
        }
        continue;
      }
      return 0;
    }
  }
}

/** the powers of ten that are exact doubles */
export const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
  1e20, 1e21, 1e22,
];

/**
 * The number in bytes [s, e) exactly as Number()/JSON.parse would give it. Plain decimals with at most
 * 15 significant digits take the exact fast path (integer mantissa ≤ 2^53 divided by an exactly
 * representable power of ten is correctly rounded by IEEE division); everything else goes through
 * Number() on the text.
 */
export function decodeNumber(bytes: Uint8Array, s: number, e: number): number {
  let i = s;
  let neg = false;
  if (bytes[i] === 45) {
    neg = true;
    i++;
  }
  let mant = 0;
  let digits = 0;
  let frac = 0;
  let inFrac = false;
  for (; i < e; i++) {
    const c = bytes[i]!;
    if (c >= 48 && c <= 57) {
      mant = mant * 10 + (c - 48);
      if (mant !== 0 || inFrac) digits++;
      if (inFrac) frac++;
    } else if (c === 46 && !inFrac) inFrac = true;
    else break;
  }
  if (i < e || digits > 15 || frac > 22) {
    return Number(Buffer.from(bytes.buffer, bytes.byteOffset + s, e - s).toString('latin1'));
  }
  const v = frac === 0 ? mant : mant / POW10[frac]!;
  return neg ? -v : v;
}
