import { describe, expect, it } from 'vitest';
import { rankRanges, rankSetText } from '../../src/util/rank-set.js';

describe('rank sets in words', () => {
  it('one, a few, runs as ranges', () => {
    expect(rankSetText([3])).toBe('rank 3');
    expect(rankSetText([1, 0])).toBe('ranks 0 and 1');
    expect(rankSetText([3, 0, 1])).toBe('ranks 0, 1 and 3');
    expect(rankSetText([0, 1, 2, 3, 4, 5, 6, 8, 10, 11, 12])).toBe('11 ranks (0–6, 8 and 10–12)');
    expect(rankSetText([])).toBe('no rank');
    expect(rankRanges([2, 2, 1, 0])).toBe('0–2');
  });

  it('does not grow with the job: 255 waiting ranks, every other rank of 512', () => {
    const waiting = Array.from({ length: 255 }, (_, i) => i);
    expect(rankSetText(waiting)).toBe('255 ranks (0–254)');
    const everyOther = Array.from({ length: 256 }, (_, i) => 2 * i);
    const text = rankSetText(everyOther);
    expect(text.startsWith('256 ranks (0, 2, 4')).toBe(true);
    expect(text.endsWith(', … 510)')).toBe(true);
    expect(text.length).toBeLessThan(60);
  });
});
