/**
 * Straggler samples in a rank's stack log (`# request <id> <sent> sample`): each is handed on once,
 * whole, as a sample (never as a dump to keep), and the evidence keeps only its count and whether it
 * was inside a collective wait.
 */
import { describe, expect, it } from 'vitest';
import { Evidence } from '../../../src/analysis/evidence.js';
import type { DumpEvent, StackSampleEvent } from '../../../src/ingest/events.js';
import { StackLogReader } from '../../../src/ingest/stack-log.js';

const HEADER =
  '# nsa-dbg stacks {"rank": 3, "rank_var": "RANK", "local_rank": 3, "pid": 4242, "signal": 12, "path": "/x/log", "host": "h"}';
const IN_COLLECTIVE = [
  'Current thread 0x00007f0000000001 (most recent call first):',
  '  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1541 in all_reduce',
  '  File "/w/train.py", line 49 in main',
];
const IN_WORK = [
  'Current thread 0x00007f0000000001 (most recent call first):',
  '  File "/w/train.py", line 34 in work',
  '  File "/w/train.py", line 48 in main',
];

function read(lines: string[], partial = false) {
  const dumps: DumpEvent[] = [];
  const samples: StackSampleEvent[] = [];
  const r = new StackLogReader(
    'log',
    () => {},
    (d) => dumps.push(d),
    () => {},
    (s) => samples.push(s),
  );
  for (const l of lines) {
    r.line(l);
    r.flush(); // as live: a flush after every piece
  }
  if (!partial) r.end();
  return { dumps, samples };
}

describe('straggler samples in the stack log', () => {
  it('are handed on once each, when whole, and never as dumps', () => {
    const { dumps, samples } = read([
      HEADER,
      '# request 100.000 100.001 sample',
      IN_COLLECTIVE[0]!,
      IN_COLLECTIVE[1]!,
      IN_COLLECTIVE[2]!,
      '# in-python 100.050',
      '# request 100.200 100.201 sample',
      ...IN_WORK,
      '# request 101.000 101.001',
      ...IN_WORK,
    ]);
    expect(samples.map((s) => [s.rank, s.pid, s.ts])).toEqual([
      [3, 4242, 100],
      [3, 4242, 100.2],
    ]);
    // a request without the mark is a dump as ever (re-read as it grows)
    expect([...new Set(dumps.map((d) => d.file))]).toEqual(['log@101.000']);
  });

  it('a sample cut mid-way is not read until it is whole', () => {
    const { samples } = read([HEADER, '# request 100.000 100.001 sample', IN_COLLECTIVE[0]!], true);
    expect(samples).toEqual([]);
  });

  it('the evidence counts them per rank, inside a collective or not, and keeps no dump', () => {
    const e = new Evidence();
    const r = new StackLogReader(
      'log',
      (w) => e.addEvent(w),
      (d) => e.addEvent(d),
      () => {},
      (s) => e.addEvent(s),
    );
    const lines = [HEADER];
    for (let i = 0; i < 30; i++)
      lines.push(
        `# request ${100 + i}.000 ${100 + i}.001 sample`,
        ...(i % 3 === 0 ? IN_COLLECTIVE : IN_WORK),
      );
    for (const l of lines) r.line(l);
    r.end();
    expect(e.dumpEvents()).toEqual([]);
    expect(e.stragglers()).toEqual([
      { rank: 3, node: 'h', score: 0.667, waitShare: 0.333, samples: 30, named: false, confidence: 0 },
    ]);
  });
});
