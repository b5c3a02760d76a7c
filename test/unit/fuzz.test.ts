/**
 * Hostile input: 10k lines of truncated records, invalid UTF-8, NUL bytes, terminal escapes, a 5 MB
 * line, mixed with good records, through every reader and analyzeDir. Nothing may throw, good records
 * must survive, and skippedLines must count exactly the lines that were records but unusable.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/ingest/events.js';
import { HeartbeatReader } from '../../src/ingest/heartbeat.js';
import { LineSplitter } from '../../src/ingest/line-splitter.js';
import { StdoutParser } from '../../src/ingest/stdout-parser.js';
import { analyzeDir } from '../../src/runs/analyze-dir.js';

/** Deterministic PRNG (mulberry32), so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ESCAPES = [
  '\x1b[31m',
  '\x1b[0m',
  '\x1b]0;title\x07',
  '\x1b[2J',
  '\x9b1;2H',
  '\x1bP+q\x1b\\',
  '\x07',
  '\x1b(B',
];

interface Corpus {
  bytes: Buffer;
  goodSteps: number;
  skipped: number;
}

function stdoutCorpus(rand: () => number, lines: number): Corpus {
  const parts: Buffer[] = [];
  let goodSteps = 0;
  let skipped = 0;
  const pick = <T>(a: T[]) => a[Math.floor(rand() * a.length)]!;
  for (let i = 0; i < lines; i++) {
    const step = `step ${String(i).padStart(4, '0')} | loss 5.7014 | lr 2.00e-05 | toks/s 66`;
    const kind = Math.floor(rand() * 7);
    if (kind === 0) {
      parts.push(Buffer.from(`${step}\n`));
      goodSteps++;
    } else if (kind === 1) {
      // escapes spliced into a good step line: still a step
      const cut = 5 + Math.floor(rand() * (step.length - 5));
      parts.push(Buffer.from(`${step.slice(0, cut)}${pick(ESCAPES)}${step.slice(cut)}\n`));
      goodSteps++;
    } else if (kind === 2) {
      // truncated step line (a cut-off write, past `step NNNN |`)
      parts.push(Buffer.from(`${step.slice(0, 12 + Math.floor(rand() * 20))}\n`));
      skipped++;
    } else if (kind === 3) {
      // invalid UTF-8 bytes inside a step record
      parts.push(
        Buffer.concat([
          Buffer.from(step.slice(0, 20)),
          Buffer.from([0xff, 0xc3, 0x28]),
          Buffer.from(`${step.slice(20)}\n`),
        ]),
      );
      skipped++;
    } else if (kind === 4) {
      // NUL bytes inside a tagged record
      parts.push(Buffer.from(`[train] dataset=synth\u0000\u0000etic tokenizer=byte\n`));
      skipped++;
    } else if (kind === 5) {
      // truncated JSON and escape soup in plain text: ordinary text, not records
      parts.push(Buffer.from(`x ${pick(ESCAPES)}{"ts": 17953154${pick(ESCAPES)}\n`));
    } else {
      // random bytes (no newlines), starting with a letter so they are plain text
      const n = 1 + Math.floor(rand() * 200);
      const b = Buffer.alloc(n + 2);
      b[0] = 0x78;
      for (let k = 1; k <= n; k++) {
        let c = Math.floor(rand() * 256);
        if (c === 0x0a || c === 0x0d) c = 0x20;
        b[k] = c;
      }
      b[n + 1] = 0x0a;
      parts.push(b);
    }
  }
  // one 5 MB line without a newline for a long while
  parts.push(Buffer.from(`step 9999 | ${'y'.repeat(5 * 1024 * 1024)}\n`));
  skipped++;
  return { bytes: Buffer.concat(parts), goodSteps, skipped };
}

function heartbeatCorpus(rand: () => number, lines: number): Corpus & { good: number } {
  const parts: Buffer[] = [];
  let good = 0;
  let skipped = 0;
  for (let i = 0; i < lines; i++) {
    const rec = `{"ts": ${1795315473 + i}.25, "iso": "x", "pid": 4162, "rank": 0, "step": ${i}, "msg": "beat", "gpu_mem_alloc": 92, "gpu_mem_reserved": 412, "phase": "step_start"}`;
    const kind = Math.floor(rand() * 6);
    if (kind === 0 || kind === 1) {
      parts.push(Buffer.from(`${rec}\n`));
      good++;
    } else if (kind === 2) {
      parts.push(Buffer.from(`${rec.slice(0, Math.floor(rand() * (rec.length - 1)) + 1)}\n`));
      skipped++;
    } else if (kind === 3) {
      parts.push(
        Buffer.concat([
          Buffer.from(rec.slice(0, 60)),
          Buffer.from([0xfe, 0x80]),
          Buffer.from(`${rec.slice(60)}\n`),
        ]),
      );
      skipped++;
    } else if (kind === 4) {
      parts.push(Buffer.from(`${rec.slice(0, 30)}\u0000\u0000${rec.slice(30)}\n`));
      skipped++;
    } else {
      parts.push(Buffer.from(`${rec.slice(0, 40)}\x1b[31m${rec.slice(40)}\n`));
      skipped++;
    }
  }
  parts.push(Buffer.from(`{"ts": 1, "msg": "${'z'.repeat(5 * 1024 * 1024)}"}\n`));
  skipped++;
  return { bytes: Buffer.concat(parts), goodSteps: 0, good, skipped };
}

function feed(bytes: Buffer, rand: () => number, push: (chunk: Buffer) => void): void {
  for (let i = 0; i < bytes.length; ) {
    const n = 1 + Math.floor(rand() * 70000);
    push(bytes.subarray(i, i + n));
    i += n;
  }
}

describe('fuzz: 10k hostile lines', () => {
  const rand = rng(12345);
  const out = stdoutCorpus(rand, 10_000);
  const hb = heartbeatCorpus(rand, 10_000);

  it('LineSplitter + StdoutParser: nothing throws, good steps survive, skipped counted exactly', () => {
    const split = new LineSplitter();
    const parser = new StdoutParser();
    const events: IngestEvent[] = [];
    feed(out.bytes, rand, (c) => {
      for (const l of split.push(c)) events.push(...parser.push(l));
    });
    for (const l of split.flush()) events.push(...parser.push(l));
    events.push(...parser.flush());
    expect(split.overlong).toBe(1);
    expect(events.filter((e) => e.kind === 'step')).toHaveLength(out.goodSteps);
    expect(parser.skippedLines).toBe(out.skipped);
  });

  it('HeartbeatReader: nothing throws, good records survive, skipped counted exactly', () => {
    const r = new HeartbeatReader();
    let beats = 0;
    feed(hb.bytes, rand, (c) => {
      beats += r.push(c).length;
    });
    beats += r.flush().length;
    expect(beats).toBe(hb.good);
    expect(r.skippedLines).toBe(hb.skipped);
  });

  it('analyzeDir over the same files: a verdict, with every skipped line counted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-dbg-fuzz-'));
    writeFileSync(join(dir, 'stdout.log'), out.bytes);
    writeFileSync(join(dir, 'heartbeat_rank0.jsonl'), hb.bytes);
    writeFileSync(join(dir, 'stackdump_1.txt'), out.bytes.subarray(0, 100_000));
    writeFileSync(join(dir, 'metrics.json'), '{"steps": 3, "loss_first": ');
    writeFileSync(join(dir, '.anomaly_type'), Buffer.from([0xff, 0x00, 0x1b]));
    const r = await analyzeDir(dir);
    expect(r.skippedLines).toBe(out.skipped + hb.skipped);
    expect(['incomplete', 'hang']).toContain(r.verdict);
    expect(r.stepsReached).toBeGreaterThan(9000);
  });
});
