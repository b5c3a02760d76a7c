import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mainThread, mainThreadTop, parseStackDump } from '../../../src/ingest/stackdump.js';

// real H200 captures, kept beside the tests (test/fixtures/nsa-vibe-h200/README.md)
const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'nsa-vibe-h200');

const read = (p: string) => readFileSync(p, 'utf8');

describe('parseStackDump', () => {
  it('nsa-vibe signal dump (real capture): main thread in grouped_selection_attention_packed', () => {
    const d = parseStackDump(
      read(join(FIX, 'batched/stackdump_1795315501.txt')),
      'stackdump_1795315501.txt',
    )!;
    expect(d.dumpKind).toBe('signal');
    expect(d.signal).toBe(10);
    expect(d.ts).toBeCloseTo(1795315501.782, 2);
    expect(d.threads.map((t) => t.name)).toEqual(['MainThread', 'Thread-1', 'Thread-2 (_watchdog)']);
    const main = mainThread(d)!;
    expect(main.frames[0]).toMatchObject({ function: '<module>', line: 1539 });
    expect(main.frames.at(-1)!.function).toBe('dump_stack');
    expect(mainThreadTop(d)).toMatchObject({
      file: '/root/nsa-vibe/nsa/core/attention_kernels.py',
      line: 298,
      function: 'grouped_selection_attention_packed',
    });
  });

  it('nsa-vibe watchdog dump with GRAD TRACE and MODULE BWD TRACE sections', () => {
    const d = parseStackDump(
      read('test/fixtures/synthetic/watchdog_stackdump_1795316000.txt'),
      'watchdog_stackdump_1795316000.txt',
    )!;
    expect(d.dumpKind).toBe('watchdog');
    expect(d.lastHeartbeatTs).toBe(1795315800.5);
    expect(d.ts).toBe(1795316000);
    expect(d.missingGrads).toEqual(['blocks.4.attn.gate_mlp.weight', 'blocks.4.attn.gate_mlp.bias']);
    expect(d.threads).toHaveLength(2);
    expect(mainThreadTop(d)!.function).toBe('_engine_run_backward');
  });

  it('faulthandler: innermost first in the file, stored outermost first', () => {
    const d = parseStackDump(
      read('test/fixtures/synthetic/faulthandler_sigsegv.txt'),
      'faulthandler_sigsegv.txt',
    )!;
    expect(d.dumpKind).toBe('faulthandler');
    expect(d.signal).toBe(11);
    const main = mainThread(d)!;
    expect(main.name).toBe('MainThread');
    expect(main.frames[0]!.function).toBe('<module>');
    expect(mainThreadTop(d)).toMatchObject({ function: 'sliding_window_attention_fa2', line: 469 });
  });

  it('py-spy dump, skipping --locals lines', () => {
    const d = parseStackDump(read('test/fixtures/synthetic/pyspy_dump.pyspy.txt'), 'pyspy_dump.pyspy.txt')!;
    expect(d.dumpKind).toBe('py-spy');
    expect(d.threads.map((t) => t.name)).toEqual(['MainThread', 'Thread-2 (_watchdog)']);
    expect(mainThread(d)!.frames.map((f) => f.function)).toEqual([
      '<module>',
      'main',
      '_call_impl',
      'forward',
      '_forward_prefill_sequential',
    ]);
    expect(mainThreadTop(d)).toEqual({
      file: 'nsa/core/nsa_attention.py',
      line: 1188,
      function: '_forward_prefill_sequential',
    });
  });

  it('returns null for text that is no dump', () => {
    expect(parseStackDump('hello\nworld\n', 'x.txt')).toBeNull();
    expect(parseStackDump('Signal 10 at 2026-11-22T02:45:01Z\n', 'stackdump_1.txt')).toBeNull();
  });
});
