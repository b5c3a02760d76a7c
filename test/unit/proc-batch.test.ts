import { describe, expect, it } from 'vitest';
import { parseProcBatch } from '../../src/runs/proc-batch.js';

describe('one /proc read for many pids', () => {
  it('parses each pid’s stat, caught signals and wait channel; a pid that is gone is absent', () => {
    const text = [
      '@@ 101',
      '101 (python3) S 1 101 101 0 -1 4194560 1 0 0 0 250 50 0 0 20 0 4 0 1 1 1',
      '@@c 0000000180004a02',
      '@@w futex_wait_queue',
      '@@ 102',
      '102 (pt main thread) R 1 102 102 0 -1 4194560 1 0 0 0 900 100 0 0 20 0 4 0 1 1 1',
      '@@c 0000000000000800',
      '@@w 0',
    ].join('\n');
    const m = parseProcBatch(text);
    expect([...m.keys()]).toEqual([101, 102]);
    expect(m.get(101)).toEqual({
      state: 'S',
      ticks: 300,
      wchan: 'futex_wait_queue',
      sigCgt: '0000000180004a02',
    });
    expect(m.get(102)).toMatchObject({ state: 'R', ticks: 1000, wchan: '' });
    expect(m.has(103)).toBe(false);
  });
});
