/**
 * PyTorch's Flight Recorder dumps of a real NCCL collective timeout on two H200s (torch 2.11,
 * test/fixtures/torch211/fr/): read by nsa-dbg's own pickle reader, and summarised as torch's own
 * analyzer (fr_trace, its output kept beside the dumps) summarised them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { missedCollectives, parseFlightRecorder } from '../../../src/ingest/flight-recorder.js';
import { PickleError, readPickle } from '../../../src/ingest/pickle.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const FR = join(import.meta.dirname, '..', '..', 'fixtures', 'torch211', 'fr');
const dump = (r: number) => readFileSync(join(FR, `nccl_trace_rank_${r}`));

describe('Flight Recorder dumps', () => {
  it('reads each rank’s groups, status and newest collectives', () => {
    const r0 = parseFlightRecorder(dump(0), 'nccl_trace_rank_0')!;
    expect(r0.groups).toEqual({ '0': 'default_pg' });
    expect(r0.status['0']).toEqual({ enqueued: 6, started: -1, completed: 5 });
    expect(r0.entries.at(-1)).toMatchObject({ seq: 6, op: 'nccl:all_reduce', state: 'scheduled', pg: '0' });
    expect(r0.entries.at(-1)!.frames[0]!.function).toBe('<module>');
    const r1 = parseFlightRecorder(dump(1), 'nccl_trace_rank_1')!;
    expect(r1.status['0']!.enqueued).toBe(5);
  });

  it('says which rank missed which collective, as torch’s own fr_trace does', () => {
    const torch = readFileSync(join(FR, 'fr_trace.txt'), 'utf8');
    const seq = Number(/sequence number: (\d+)/.exec(torch)![1]);
    const missing = /missing ranks: \{([\d, ]+)\}/.exec(torch)![1]!.split(',').map(Number);
    const op = /collective: (\S+)/.exec(torch)![1];
    const ours = missedCollectives([0, 1].map((r) => parseFlightRecorder(dump(r), `nccl_trace_rank_${r}`)!));
    expect(ours).toEqual([
      {
        ranks: missing,
        pg: 'default_pg',
        seq,
        op,
        waiting: [0],
        state: 'scheduled',
        frame: { file: '/home/user/nsa-dbg/test/device/fr_timeout.py', line: 24, function: '<module>' },
      },
    ]);
  });

  it('a cut-off dump waits for its bytes; what is not plain data is refused, nothing is called', () => {
    expect(parseFlightRecorder(dump(0).subarray(0, 500), 'nccl_trace_rank_0')).toBeNull();
    // protocol 2: GLOBAL 'os\nsystem\n' — a class reference, never resolved
    expect(() => readPickle(Buffer.from('\x80\x02cos\nsystem\n.', 'latin1'))).toThrow(PickleError);
  });

  it('the verdict of the run names it', async () => {
    const r = await analyzeDir(FR);
    expect(r.verdict).toBe('hang');
    expect(r.summary).toBe(
      'hang: rank 1 never entered nccl:all_reduce #6 (default_pg) that rank 0 waited in (<module> /home/user/nsa-dbg/test/device/fr_timeout.py:24), from the Flight Recorder',
    );
  });
});
