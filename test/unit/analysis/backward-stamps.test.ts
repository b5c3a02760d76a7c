/**
 * Output stamped backwards by the arrival clock: live, the trainer's clock is nsa-dbg's shifted by
 * what the heartbeats show, learned as they are read, so output read before the first heartbeat is
 * stamped unshifted, later than the next chunk. Seen on a real torchrun trial (two gloo ranks, a
 * stall at step 3): rank 0's two step lines came stamped 14 ms backwards, its output learned no step
 * time and kept the 60 s first-step allowance, so rank 0 was never silent, never asked for its
 * stack, and the stalled rank's root cause ("ranks 0 wait in a collective") was lost. A record
 * stamped before the one before it came with it (an interval of 0, as lines of one chunk).
 */
import { describe, expect, it } from 'vitest';
import { Evidence } from '../../../src/analysis/evidence.js';
import { RunFolderReader } from '../../../src/ingest/run-folder.js';
import { hbLine } from './run-dir.js';

const T0 = 1795477067;

describe('output stamped backwards', () => {
  it('two ranks silent in the same step are both silent, whatever order their output was stamped in', () => {
    const ev = new Evidence({ detector: { floorS: 3 } });
    ev.expectProbes();
    const reader = new RunFolderReader(ev, { timed: true });
    const beats = (rank: number) =>
      [
        { step: 0, ts: T0, msg: 'boot', phase: 'start' },
        { step: 1, ts: T0 + 0.01, msg: 'beat', phase: 'step_start' },
        { step: 1, ts: T0 + 0.16, msg: 'progress', loss: 0.0176, toks: 833 },
        { step: 2, ts: T0 + 0.161, msg: 'beat', phase: 'step_start' },
        { step: 2, ts: T0 + 0.32, msg: 'progress', loss: 0.0705, toks: 816 },
        { step: 3, ts: T0 + 0.321, msg: 'beat', phase: 'step_start' },
      ].map((b) => `${hbLine(rank, b, 100 + rank)}\n`);
    const l1 = 'step 0001 | loss 0.0176 | lr 1.00e-02 | toks/s 833\n';
    const l2 = 'step 0002 | loss 0.0705 | lr 1.00e-02 | toks/s 816\n';
    // as the live clock wrote it: the first chunk before any heartbeat was read, the second after
    const clock = [
      { f: 'stdout.log', o: l1.length, t: T0 + 0.476 },
      { f: 'stdout.log', o: l1.length + l2.length, t: T0 + 0.462 },
    ];
    reader.push('nsa-dbg-clock.jsonl', Buffer.from(clock.map((r) => `${JSON.stringify(r)}\n`).join('')));
    for (const rank of [0, 1]) reader.push(`heartbeat_rank${rank}.jsonl`, Buffer.from(beats(rank).join('')));
    reader.push('stdout.log', Buffer.from(l1 + l2));
    // 4 s after the last records: past the 3 s floor for both ranks
    const silent = ev
      .silences(T0 + 4.5)
      .map((c) => c.rank)
      .sort();
    expect(silent).toEqual([0, 1]);
  });
});
