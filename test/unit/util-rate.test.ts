import { describe, expect, it } from 'vitest';
import { rateOrDash, rateText } from '../../src/util/rate.js';

describe('rateText: toks/s as a person reads it', () => {
  it('drops the decimal from 100 up (the issue: "median 5779.4 toks/s")', () => {
    expect(rateText(5779.4)).toBe('5779');
    expect(rateText(5779.5)).toBe('5780');
    expect(rateText(100.04)).toBe('100');
    expect(rateText(123456.7)).toBe('123457');
  });

  it('keeps about three significant figures below 100, without trailing zeros', () => {
    expect(rateText(83.04)).toBe('83');
    expect(rateText(81.35)).toBe('81.3');
    expect(rateText(2.345)).toBe('2.35');
    expect(rateText(0.01234)).toBe('0.0123');
    expect(rateText(0)).toBe('0');
  });

  it('says what is not a number, and a dash for none', () => {
    expect(rateText(Number.NaN)).toBe('NaN');
    expect(rateOrDash(null)).toBe('–');
    expect(rateOrDash(undefined)).toBe('–');
    expect(rateOrDash(5779.4)).toBe('5779');
  });
});
