/**
 * The rank → pid map (whom the checks signal) is asked for on every file chunk and for every rank a
 * round: it is kept until a pid comes or changes (a heartbeat's, a stack hook's registration), and
 * then it is right at once. Fed through the model's own reader, as the session feeds it.
 */
import { describe, expect, it } from 'vitest';
import { LiveModel } from '../../../src/session/live-model.js';
import { hbLine } from '../analysis/run-dir.js';

const T0 = 1795787200;
const beat = (rank: number, step: number, pid: number) =>
  Buffer.from(`${hbLine(rank, { step, ts: T0 + step, msg: 'beat', phase: 'step_start' }, pid)}\n`);
const hook = (rank: number, pid: number) =>
  Buffer.from(
    `# nsa-dbg stacks ${JSON.stringify({ rank, rank_var: 'RANK', local_rank: rank, pid, host: 'vm', signal: 12, main: '0x01', t: T0 })}\n`,
  );

describe('LiveModel.rankPids', () => {
  it('the same map while no pid changes; a new pid, a restarted rank and a hook registration show at once', () => {
    const m = new LiveModel();
    m.onFileChunk('heartbeat_rank0.jsonl', beat(0, 1, 100), Date.now());
    m.onFileChunk('heartbeat_rank1.jsonl', beat(1, 1, 101), Date.now());
    const first = m.rankPids;
    expect([...first]).toEqual([
      [0, 100],
      [1, 101],
    ]);
    // more records of the same processes: nothing to rebuild
    m.onFileChunk('heartbeat_rank0.jsonl', beat(0, 2, 100), Date.now());
    expect(m.rankPids).toBe(first);
    expect(m.rankOfPid(101)).toBe(1);
    // rank 1 restarted as another process
    m.onFileChunk('heartbeat_rank1.jsonl', beat(1, 3, 201), Date.now());
    expect(m.rankPids.get(1)).toBe(201);
    expect(m.rankOfPid(201)).toBe(1);
    expect(m.rankOfPid(101)).toBeUndefined();
    // the stack hook's registration is the rank's own process: it wins over the heartbeat's pid
    m.onFileChunk('nsa-dbg-stacks_rank0_pid300.log', hook(0, 300), Date.now());
    expect(m.rankPids.get(0)).toBe(300);
    expect(m.rankOfPid(300)).toBe(0);
  });
});
