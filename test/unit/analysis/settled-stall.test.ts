/**
 * When a hang of many ranks has nothing more to learn, the stop need not wait for stack requests
 * still under way: the culprit is confirmed hung and every other silent rank has given a stack that
 * waits for it. Seen at 512 demo ranks on 2 cores: with the culprit confirmed and every stack in,
 * the stop waited 17–35 s for the prober's round in flight.
 */
import { describe, expect, it } from 'vitest';
import { Evidence } from '../../../src/analysis/evidence.js';
import { RunFolderReader } from '../../../src/ingest/run-folder.js';
import { hbLine } from './run-dir.js';

const T0 = 1795787200;
const log = (rank: number) => `nsa-dbg-stacks_rank${rank}_pid${100 + rank}.log`;
const COLLECTIVE = [
  '  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1536 in all_reduce',
  '  File "train.py", line 90 in step',
];
const OWN = ['  File "train.py", line 183 in backward', '  File "train.py", line 200 in main'];

/**
 * three ranks silent in step 6: ranks 0 and 1 in all_reduce (hook dumps from native code: seen,
 * no in-python), rank 2 asleep in its own code (`ownSamples` in-Python dumps, 2 s apart)
 */
function evidence(o: { ownSamples: number; rank1Dumps: boolean }) {
  const ev = new Evidence({ detector: { floorS: 3 } });
  ev.expectProbes();
  const reader = new RunFolderReader(ev, { timed: true });
  const probes: object[] = [];
  for (const rank of [0, 1, 2]) {
    const beats = [1, 2, 3, 4, 5]
      .flatMap((k) => [
        { step: k, ts: T0 + (k - 1) * 0.2, msg: 'beat', phase: 'step_start' },
        { step: k, ts: T0 + k * 0.2 - 0.01, msg: 'progress', loss: 1 / k, toks: 100 },
      ])
      .concat([{ step: 6, ts: T0 + 1, msg: 'beat', phase: 'step_start' }])
      .map((b) => `${hbLine(rank, b, 100 + rank)}\n`);
    reader.push(`heartbeat_rank${rank}.jsonl`, Buffer.from(beats.join('')));
    const head = {
      rank,
      rank_var: 'RANK',
      local_rank: rank,
      pid: 100 + rank,
      host: 'vm',
      signal: 12,
      main: '0x01',
      t: T0,
    };
    const lines = [`# nsa-dbg stacks ${JSON.stringify(head)}`, '# marks seen'];
    const asks = rank === 2 ? o.ownSamples : rank === 1 && !o.rank1Dumps ? 0 : 1;
    for (let k = 0; k < asks; k++) {
      const at = T0 + 10 + 2 * k;
      const id = at.toFixed(3);
      lines.push(`# request ${id} ${at}`, 'Current thread 0x01 (most recent call first):');
      lines.push(...(rank === 2 ? OWN : COLLECTIVE), `# seen ${at + 0.01}`);
      if (rank === 2) lines.push(`# in-python ${at + 0.02}`);
      probes.push({
        kind: 'dump-request',
        ts: at,
        rank,
        pid: 100 + rank,
        outcome: 'faulthandler',
        purpose: 'suspect',
        file: `${log(rank)}@${id}`,
      });
    }
    reader.push(log(rank), Buffer.from(`${lines.join('\n')}\n`));
    for (const ts of [T0 + 9, T0 + 16, T0 + 18])
      probes.push({
        kind: 'proc',
        ts,
        rank,
        pid: 100 + rank,
        state: 'S',
        cpuPct: 0,
        wchan: 'futex_wait_queue',
      });
  }
  reader.push('nsa-dbg-probes.jsonl', Buffer.from(probes.map((p) => `${JSON.stringify(p)}\n`).join('')));
  reader.settle();
  return ev;
}

describe('a hang of many ranks with nothing more to learn', () => {
  it('the culprit confirmed (asleep in its own code, 3 samples) and the others’ stacks in a collective: settled', () => {
    expect(evidence({ ownSamples: 3, rank1Dumps: true }).settledStall(T0 + 19)).toEqual({
      culprit: 2,
      waiting: [0, 1],
    });
  });

  it('a rank with no stack yet: not settled (its stack is still to come)', () => {
    expect(evidence({ ownSamples: 3, rank1Dumps: false }).settledStall(T0 + 19)).toBeNull();
  });

  it('the culprit not yet confirmed (one sample of three): not settled', () => {
    expect(evidence({ ownSamples: 1, rank1Dumps: true }).settledStall(T0 + 19)).toBeNull();
  });

  // what the prober stops sampling at a confirmed hang (run-checks.ts): the ranks whose own stacks
  // say they wait, while the culprit's samples go on
  it('the ranks that wait for the culprit by their own stacks, whether or not it is confirmed yet', () => {
    expect(evidence({ ownSamples: 1, rank1Dumps: true }).waitingForCulprit(T0 + 19)).toEqual([0, 1]);
    expect(evidence({ ownSamples: 3, rank1Dumps: false }).waitingForCulprit(T0 + 19)).toEqual([0]);
  });
});
