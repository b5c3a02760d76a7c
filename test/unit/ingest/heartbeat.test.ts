import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BeatEvent } from '../../../src/ingest/events.js';
import { HeartbeatReader } from '../../../src/ingest/heartbeat.js';
import { parsePythonJson } from '../../../src/ingest/python-json.js';

// real H200 captures, kept beside the tests (test/fixtures/nsa-vibe-h200/README.md)
const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'nsa-vibe-h200');
const batched = readFileSync(`${FIX}/batched/heartbeat_rank0.jsonl`, 'utf8');

/** What JSON.parse (plus NaN literals) makes of a line, in BeatEvent shape. */
function reference(line: string): Omit<BeatEvent, 'extra'> & { extra: Record<string, unknown> } {
  const o = parsePythonJson(line) as Record<string, unknown>;
  const { ts, pid, rank, step, msg, phase, gpu_mem_alloc, gpu_mem_reserved, loss, toks_per_s, ...extra } = o;
  return {
    kind: 'beat',
    rank: rank as number,
    step: step as number,
    ts: ts as number,
    pid: pid as number,
    msg: msg as string,
    phase: phase as string | undefined,
    gpuMemAllocMiB: gpu_mem_alloc as number,
    gpuMemReservedMiB: gpu_mem_reserved as number,
    loss: loss as number | undefined,
    toksPerS: toks_per_s as number | undefined,
    extra,
  };
}

/** One line as the reader reads it (in a file of rank `rank`): its record, or null when it was skipped. */
function readLine(line: string, rank = 0): BeatEvent | null {
  const r = new HeartbeatReader(rank);
  const beats = [...r.push(Buffer.from(`${line}\n`)), ...r.flush()];
  expect(r.skippedLines).toBe(beats.length === 0 ? 1 : 0);
  return beats[0] ?? null;
}

describe('one heartbeat line', () => {
  it('gives exactly what JSON.parse gives, for every line of the real capture', () => {
    for (const line of batched.trim().split('\n')) {
      const b = readLine(line)!;
      expect(b).not.toBeNull();
      expect({ ...b, extra: b.extra }).toEqual(reference(line));
    }
  });

  it('a phase, the numbers, both, and keys after them: what JSON.parse gives', () => {
    const head =
      '{"ts": 1795891170.564, "iso": "2026-11-28T18:39:30.564000Z", "pid": 25721, "rank": 3, "step": 1';
    for (const tail of [
      ', "msg": "progress", "gpu_mem_alloc": 92, "gpu_mem_reserved": 412, "phase": "progress", "loss": 5.701999933334667, "toks_per_s": 70100}',
      ', "msg": "progress", "phase": "progress", "loss": NaN, "toks_per_s": 1.5, "lr": 0.0001}',
      ', "msg": "progress", "loss": 5.5, "toks_per_s": 66.37695403491539}',
      ', "msg": "beat", "gpu_mem_alloc": 92, "gpu_mem_reserved": 412, "phase": "step_start"}',
      ', "msg": "beat", "phase": "step_start", "note": "x"}',
    ]) {
      const line = head + tail;
      const b = readLine(line)!;
      expect({ ...b, extra: b.extra }).toEqual(reference(line));
    }
  });

  it('gives the same values on the general path (other key order, spacing)', () => {
    const line =
      '{"msg":"progress","step":7,"rank":1,"ts":1795315481.1764219,"loss":5.5,"toks_per_s":66.37695403491539,"x":[1,{"y":2}]}';
    const b = readLine(line)!;
    expect(b.rank).toBe(1);
    expect(b.step).toBe(7);
    expect(b.ts).toBe(1795315481.1764219);
    expect(b.toksPerS).toBe(66.37695403491539);
    expect(b.extra).toEqual({ x: [1, { y: 2 }] });
  });

  it("accepts Python's NaN / Infinity / -Infinity", () => {
    const base =
      '{"ts": 1.5, "iso": "x", "pid": 1, "rank": 0, "step": 3, "msg": "progress", "gpu_mem_alloc": 1, "gpu_mem_reserved": 2';
    expect(readLine(`${base}, "loss": NaN, "toks_per_s": Infinity}`)!.loss).toBeNaN();
    expect(readLine(`${base}, "loss": -Infinity, "toks_per_s": 1.0}`)!.loss).toBe(Number.NEGATIVE_INFINITY);
    const odd = readLine('{"msg": "progress", "ts": 2.0, "loss": NaN, "k": [NaN, Infinity]}')!;
    expect(odd.loss).toBeNaN();
    expect(odd.extra.k).toEqual([Number.NaN, Number.POSITIVE_INFINITY]);
  });

  it('takes rank from the record, the default only when absent', () => {
    expect(readLine('{"ts": 1, "msg": "beat", "rank": 3, "step": 1}', 0)!.rank).toBe(3);
    expect(readLine('{"ts": 1, "msg": "beat", "step": 1}', 5)!.rank).toBe(5);
  });

  it('rejects malformed records', () => {
    for (const bad of [
      '{"ts": 1795315473.47, "iso": "2026-11-22T02:44:33Z", "pid": 4162, "ra',
      '{"ts": 1, "msg": "beat"}{"ts": 2, "msg": "beat"}',
      '{"ts": "1", "msg": "beat"}',
      '{"ts": 1}',
      '{"ts": 1, "msg": "beat", "step": 1.5}',
      '[1, 2]',
      'not json',
      '{"ts": 01, "msg": "beat"}',
      '{"ts": 1, "msg": "be\u0000at"}',
      '{"ts": 1, "msg": "beat", "x": nan}',
    ]) {
      expect(readLine(bad), bad).toBeNull();
    }
  });
});

describe('HeartbeatReader', () => {
  it('reads the real capture in odd-sized chunks', () => {
    const r = new HeartbeatReader();
    const buf = Buffer.from(batched);
    const beats: BeatEvent[] = [];
    for (let i = 0; i < buf.length; i += 37) beats.push(...r.push(buf.subarray(i, i + 37)));
    beats.push(...r.flush());
    expect(beats).toHaveLength(batched.trim().split('\n').length);
    expect(r.skippedLines).toBe(0);
    expect(beats.at(-1)).toMatchObject({ msg: 'beat', step: 18, phase: 'step_start' });
  });

  it('holds a partial last line (not skipped) until it completes or the analysis ends', () => {
    const r = new HeartbeatReader();
    expect(r.push(Buffer.from('{"ts": 1, "msg": "boot", "step": 0}\n{"ts": 2, "msg": "be'))).toHaveLength(1);
    expect(r.skippedLines).toBe(0);
    expect(r.push(Buffer.from('at", "step": 1}\n'))).toMatchObject([{ msg: 'beat', step: 1 }]);
    expect(r.push(Buffer.from('{"ts": 3, "msg": "pro'))).toHaveLength(0);
    expect(r.flush()).toHaveLength(0);
    expect(r.skippedLines).toBe(1);
  });

  it('counts malformed lines, ignores blank ones, rejects invalid UTF-8', () => {
    const r = new HeartbeatReader();
    const bad = Buffer.concat([
      Buffer.from('{"ts": 1, "msg": "'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}\n'),
    ]);
    r.push(Buffer.from('garbage\n\n{"ts": 1, "msg": "beat", "step": 1}\n'));
    r.push(bad);
    expect(r.skippedLines).toBe(2);
  });
});
