import { describe, expect, it } from 'vitest';
import {
  isRedraw,
  LineSplitter,
  MAX_LINE_CHARS,
  truncatedLine,
  truncationMark,
} from '../../../src/ingest/line-splitter.js';

describe('LineSplitter', () => {
  it('splits on \\n and drops the \\r of \\r\\n', () => {
    const s = new LineSplitter();
    expect(s.push('a\r\nb\nc')).toEqual(['a', 'b']);
    expect(s.flush()).toEqual(['c']);
  });

  it('keeps only the last segment of a carriage-return progress bar', () => {
    const s = new LineSplitter();
    expect(s.push('10%\r20%\r')).toEqual([]);
    expect(s.push('30%\nnext\n')).toEqual(['30%', 'next']);
    expect(new LineSplitter().push('a\rb\rc\n')).toEqual(['c']);
  });

  it('is byte-safe across chunk boundaries inside a UTF-8 sequence', () => {
    const bytes = Buffer.from('loss — ok\n', 'utf8');
    const s = new LineSplitter();
    const out: string[] = [];
    for (let i = 0; i < bytes.length; i++) out.push(...s.push(bytes.subarray(i, i + 1)));
    expect(out).toEqual(['loss — ok']);
  });

  it('holds a partial line until its newline', () => {
    const s = new LineSplitter();
    expect(s.push('step 00')).toEqual([]);
    expect(s.push('01 | x\n')).toEqual(['step 0001 | x']);
  });

  it('caps an overlong line, marks it with its whole length, and drops the rest up to the newline', () => {
    const s = new LineSplitter({ maxLineChars: 10 });
    // held until its newline, so the mark can say how long it was: 16 + 4 bytes
    expect(s.push('0123456789abcdef')).toEqual([]);
    expect(s.push('ghij\nok\n')).toEqual([`0123456789${truncationMark(20)}`, 'ok']);
    expect(s.overlong).toBe(1);
    const big = new LineSplitter();
    const lines = big.push(`${'x'.repeat(MAX_LINE_CHARS + 5)}\n`);
    expect(lines).toHaveLength(1);
    expect(truncatedLine(lines[0]!)).toEqual({ head: 'x'.repeat(MAX_LINE_CHARS), bytes: MAX_LINE_CHARS + 5 });
    expect(big.overlong).toBe(1);
  });

  it('counts a cut line in UTF-8 bytes across chunks, and ends one left open at the end', () => {
    const s = new LineSplitter({ maxLineChars: 4 });
    expect(s.push('ééééé')).toEqual([]);
    expect(s.push('é')).toEqual([]);
    expect(s.flush()).toEqual([`éééé${truncationMark(12)}`]);
    expect(truncatedLine('plain line')).toBeNull();
  });

  describe("progress (a trainer's output): redraws as they arrive", () => {
    it('gives each \\r segment but the last as a marked redraw, the last as the line', () => {
      const s = new LineSplitter({ progress: true });
      expect(s.push('a\rb\rc\n')).toEqual(['\ra', '\rb', 'c']);
      expect(s.push('10%\r')).toEqual([]);
      expect(s.push('20%\r')).toEqual(['\r10%']);
      expect(s.push('30%')).toEqual(['\r20%']);
      expect(s.push('\n')).toEqual(['30%']);
      expect(isRedraw('\r20%')).toBe(true);
      expect(isRedraw('20%')).toBe(false);
    });

    it('holds a trailing \\r until it knows whether \\n follows (\\r\\n ends a line)', () => {
      const s = new LineSplitter({ progress: true });
      expect(s.push('done\r')).toEqual([]);
      expect(s.push('\nnext\n')).toEqual(['done', 'next']);
      // a bar's erase (spaces) is no redraw
      expect(new LineSplitter({ progress: true }).push('x\r     \r{y}\n')).toEqual(['\rx', '{y}']);
    });

    it('keeps only the bar being drawn: an endless bar is never an overlong line', () => {
      const s = new LineSplitter({ maxLineChars: 10, progress: true });
      const out: string[] = [];
      for (let i = 0; i < 50; i++) out.push(...s.push(`${i % 10}/10 it\r`));
      expect(s.overlong).toBe(0);
      expect(out).toHaveLength(49);
      const plain = new LineSplitter({ maxLineChars: 10 });
      for (let i = 0; i < 50; i++) plain.push(`${i % 10}/10 it\r`);
      expect(plain.flush()[0]).toContain('line truncated');
    });
  });
});
