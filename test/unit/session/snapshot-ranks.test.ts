import { describe, expect, it } from 'vitest';
import type { Lane } from '../../../src/lanes/lane.js';
import { LiveModel } from '../../../src/session/live-model.js';
import { buildSnapshot, type SnapshotInput } from '../../../src/session/snapshot.js';

const T0 = 1795364230;
const lane = { name: 'ddp', description: 'two ranks', acceptance: {} } as unknown as Lane;

function model(ranks: number[]): LiveModel {
  const m = new LiveModel();
  for (const rank of ranks) {
    const lines = [{ rank, step: 0, ts: T0, msg: 'boot', pid: 100 + rank }];
    for (let s = 1; s <= 3; s++) {
      lines.push({ rank, step: s, ts: T0 + s - 1, msg: 'beat', pid: 100 + rank });
      lines.push({
        rank,
        step: s,
        ts: T0 + s,
        msg: 'progress',
        pid: 100 + rank,
        loss: 0.5,
        toks_per_s: 900,
      } as never);
    }
    const text = `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
    m.onFileChunk(`heartbeat_rank${rank}.jsonl`, Buffer.from(text), (T0 + 3) * 1000);
  }
  return m;
}

const input = (m: LiveModel): SnapshotInput => ({
  now: (T0 + 3.5) * 1000,
  target: 'local',
  simulated: false,
  lane,
  run: null,
  phase: 'running',
  startedAt: T0 * 1000,
  endedAt: null,
  model: m,
  gpu: { available: false, gpus: [], processes: [] },
  notice: null,
  connection: undefined,
  result: null,
  hotFrames: null,
});

describe('the snapshot of a many-rank run', () => {
  it('holds the per-rank table when there is more than one rank', () => {
    const s = buildSnapshot(input(model([0, 1])));
    expect(s.many?.rows.map((r) => [r.rank, r.step, r.lag, r.stepTimeS])).toEqual([
      [0, 3, 0, 1],
      [1, 3, 0, 1],
    ]);
    expect(s.many?.rootCause).toBeNull();
  });

  it('has none with one rank (the heartbeat rows stay)', () => {
    expect(buildSnapshot(input(model([0]))).many ?? null).toBeNull();
  });
});
