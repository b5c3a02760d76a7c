/**
 * A reader of the pickles PyTorch's Flight Recorder dumps (TORCH_NCCL_DEBUG_INFO_TEMP_FILE): plain
 * data only — dicts, lists, tuples, str, int, float, bool, None — in protocols 2 to 5. Anything
 * else (an object, a class reference) is refused: a dump comes from the box and is not trusted,
 * and nothing here ever calls anything.
 */

export type PickleValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | PickleValue[]
  | { [k: string]: PickleValue };

export class PickleError extends Error {
  override name = 'PickleError';
}

const MARK = Symbol('mark');
type Item = PickleValue | typeof MARK;

/** the value of a pickle of plain data; throws PickleError on anything else or a cut-off file */
export function readPickle(buf: Buffer): PickleValue {
  const stack: Item[] = [];
  const memo = new Map<number, PickleValue>();
  let i = 0;
  /** the next n bytes' offset (moving past them) */
  const take = (n: number) => {
    if (i + n > buf.length) throw new PickleError('the pickle is cut off');
    i += n;
    return i - n;
  };
  const u8 = () => buf.readUInt8(take(1));
  const u16 = () => buf.readUInt16LE(take(2));
  const i32 = () => buf.readInt32LE(take(4));
  const u32 = () => buf.readUInt32LE(take(4));
  const str = (n: number) => {
    const at = take(n);
    return buf.toString('utf8', at, at + n);
  };
  const pop = (): PickleValue => {
    const v = stack.pop();
    if (v === undefined || v === MARK) throw new PickleError('malformed pickle');
    return v;
  };
  const popMark = (): PickleValue[] => {
    const at = stack.lastIndexOf(MARK);
    if (at < 0) throw new PickleError('malformed pickle');
    const items = stack.splice(at + 1) as PickleValue[];
    stack.pop();
    return items;
  };
  const top = (): PickleValue => {
    const v = stack[stack.length - 1];
    if (v === undefined || v === MARK) throw new PickleError('malformed pickle');
    return v;
  };
  /** the last n values, in the order they were pushed */
  const popN = (n: number): PickleValue[] => Array.from({ length: n }, pop).reverse();
  const append = (items: PickleValue[]) => {
    const l = top();
    if (!Array.isArray(l)) throw new PickleError('malformed pickle');
    l.push(...items);
  };
  const setItems = (kv: PickleValue[]) => {
    const d = top();
    if (d === null || typeof d !== 'object' || Array.isArray(d)) throw new PickleError('malformed pickle');
    for (let k = 0; k + 1 < kv.length; k += 2) d[String(kv[k])] = kv[k + 1]!;
  };
  for (;;) {
    const op = u8();
    switch (op) {
      case 0x80: // PROTO
        u8();
        break;
      case 0x95: // FRAME
        take(8);
        break;
      case 0x2e: // STOP
        return pop();
      case 0x28: // MARK
        stack.push(MARK);
        break;
      case 0x7d: // EMPTY_DICT
        stack.push({});
        break;
      case 0x5d: // EMPTY_LIST
      case 0x29: // EMPTY_TUPLE
        stack.push([]);
        break;
      case 0x4e: // NONE
        stack.push(null);
        break;
      case 0x88: // NEWTRUE
        stack.push(true);
        break;
      case 0x89: // NEWFALSE
        stack.push(false);
        break;
      case 0x4b: // BININT1
        stack.push(u8());
        break;
      case 0x4d: // BININT2
        stack.push(u16());
        break;
      case 0x4a: // BININT
        stack.push(i32());
        break;
      case 0x8a: {
        // LONG1: a little-endian two's complement integer of n bytes
        const n = u8();
        const at = take(n);
        let v = 0n;
        for (let k = n - 1; k >= 0; k--) v = (v << 8n) | BigInt(buf[at + k]!);
        if (n > 0 && buf[at + n - 1]! & 0x80) v -= 1n << BigInt(8 * n);
        stack.push(
          v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v,
        );
        break;
      }
      case 0x47: // BINFLOAT (big-endian double)
        stack.push(buf.readDoubleBE(take(8)));
        break;
      case 0x58: // BINUNICODE
        stack.push(str(u32()));
        break;
      case 0x8c: // SHORT_BINUNICODE
        stack.push(str(u8()));
        break;
      case 0x8d: // BINUNICODE8
        stack.push(str(Number(buf.readBigUInt64LE(take(8)))));
        break;
      case 0x71: // BINPUT
        memo.set(u8(), top());
        break;
      case 0x72: // LONG_BINPUT
        memo.set(u32(), top());
        break;
      case 0x94: // MEMOIZE
        memo.set(memo.size, top());
        break;
      case 0x68: // BINGET
      case 0x6a: {
        // LONG_BINGET
        const k = op === 0x68 ? u8() : u32();
        if (!memo.has(k)) throw new PickleError('malformed pickle');
        stack.push(memo.get(k)!);
        break;
      }
      case 0x61: // APPEND
        append([pop()]);
        break;
      case 0x65: // APPENDS
        append(popMark());
        break;
      case 0x73: // SETITEM
        setItems(popN(2));
        break;
      case 0x75: // SETITEMS
        setItems(popMark());
        break;
      case 0x74: // TUPLE
        stack.push(popMark());
        break;
      case 0x85: // TUPLE1
      case 0x86: // TUPLE2
      case 0x87: // TUPLE3
        stack.push(popN(op - 0x84));
        break;
      default:
        throw new PickleError(`a pickle opcode nsa-dbg does not read (0x${op.toString(16)}): not plain data`);
    }
  }
}
