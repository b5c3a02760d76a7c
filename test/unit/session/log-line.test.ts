import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../../src/ingest/line-splitter.js';
import { boundLine, cutMark, LOG_LINE_CHARS } from '../../../src/session/log-line.js';
import { LogRing } from '../../../src/session/log-ring.js';

describe('log lines are bounded before anything draws them', () => {
  it('keeps a line that fits as it is', () => {
    expect(boundLine('step 0001 | loss 5.7')).toEqual({ text: 'step 0001 | loss 5.7' });
  });

  it('cuts a long line and says how many bytes it leaves out', () => {
    const b = boundLine(`${'é'.repeat(LOG_LINE_CHARS)}tail`);
    expect(b.text).toBe('é'.repeat(LOG_LINE_CHARS));
    expect(b.cutBytes).toBe(4);
    expect(cutMark(2_097_152)).toBe('…[+2,097,152 bytes]');
  });

  it('never cuts a surrogate pair in half', () => {
    const b = boundLine(`${'a'.repeat(LOG_LINE_CHARS - 1)}😀${'b'.repeat(10)}`);
    expect(b.text).toBe('a'.repeat(LOG_LINE_CHARS - 1));
    expect(b.cutBytes).toBe(4 + 10);
  });

  it('a line the splitter cut counts the bytes it dropped too', () => {
    const split = new LineSplitter({ maxLineChars: 5000 });
    const [line] = split.push(`${'A'.repeat(2 * 1024 * 1024)}\n`);
    const b = boundLine(line!);
    expect(b.text).toBe('A'.repeat(LOG_LINE_CHARS));
    expect(b.cutBytes).toBe(2 * 1024 * 1024 - LOG_LINE_CHARS);
  });

  it('the ring holds the cut line, not the megabyte', () => {
    const ring = new LogRing(10);
    ring.push('x'.repeat(1 << 20));
    ring.push('step 1');
    const [cut, step] = ring.tail(10);
    expect(cut!.text).toHaveLength(LOG_LINE_CHARS);
    expect(cut!.cutBytes).toBe((1 << 20) - LOG_LINE_CHARS);
    expect(step).toEqual({ id: 2, text: 'step 1' });
  });
});
