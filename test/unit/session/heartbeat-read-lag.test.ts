/**
 * A many-rank run's heartbeat files are read once a second, a few ranks' every half second
 * (run-files.ts): a live silence is judged that much later, so reading less often turns no rank
 * suspect that was beating (a low floorS, as a lane may set).
 */
import { describe, expect, it } from 'vitest';
import { LiveModel } from '../../../src/session/live-model.js';

const T0 = 1795364230;

/** `ranks` ranks, each with a boot, then a step a second to step 3, read at T0 + 3 */
function model(ranks: number): LiveModel {
  const m = new LiveModel({ detector: { k: 1, floorS: 1.5 } });
  for (let rank = 0; rank < ranks; rank++) {
    const lines: object[] = [{ ts: T0, rank, step: 0, msg: 'boot', pid: 100 + rank }];
    for (let s = 1; s <= 3; s++) {
      lines.push({ ts: T0 + s - 1, rank, step: s, msg: 'beat', pid: 100 + rank });
      lines.push({ ts: T0 + s, rank, step: s, msg: 'progress', pid: 100 + rank });
    }
    const text = `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
    m.onFileChunk(`heartbeat_rank${rank}.jsonl`, Buffer.from(text), (T0 + 3) * 1000);
  }
  return m;
}

const at = (s: number) => (T0 + 3 + s) * 1000;

describe('silences of a many-rank run, read once a second', () => {
  it('64 ranks (read every half second): silent 1.7 s after the last record, past the 1.5 s floor', () => {
    const m = model(64);
    expect(m.anySilent(at(1.4))).toBe(false);
    expect(m.anySilent(at(1.7))).toBe(true);
    expect(m.silentRanks(at(1.7))).toHaveLength(64);
  });

  it('65 ranks (read every second): not yet at 1.7 s, silent from 2 s on, in every judgement', () => {
    const m = model(65);
    expect(m.anySilent(at(1.7))).toBe(false);
    expect(m.silentRanks(at(1.7))).toEqual([]);
    expect(m.silenceOf(0, at(1.7))).toBeNull();
    expect(m.anySilent(at(2.1))).toBe(true);
    expect(m.silentRanks(at(2.1))).toHaveLength(65);
    expect(m.silenceOf(0, at(2.1))?.rank).toBe(0);
  });
});
