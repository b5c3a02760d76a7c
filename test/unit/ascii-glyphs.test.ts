import { describe, expect, it } from 'vitest';
import { asciiFromEnv, asciiText, brailleToAscii, foldToAscii, resolveAscii } from '../../panels/ascii.js';
import { plotSeriesSegments } from '../../panels/charts/braille.js';
import { gauge } from '../../panels/charts/gauge.js';
import { sparkline } from '../../panels/charts/sparkline.js';

const PRINTABLE_ASCII = /^[\u0020-\u007e]*$/;

describe('ASCII mode from the locale', () => {
  it('is on unless LC_ALL, else LC_CTYPE, else LANG names UTF-8', () => {
    expect(asciiFromEnv({ LANG: 'en_US.UTF-8' })).toBe(false);
    expect(asciiFromEnv({ LANG: 'C.utf8' })).toBe(false);
    expect(asciiFromEnv({ LANG: 'C' })).toBe(true);
    expect(asciiFromEnv({ LANG: 'en_US.ISO-8859-1' })).toBe(true);
    expect(asciiFromEnv({})).toBe(true);
    expect(asciiFromEnv({ LC_ALL: 'C', LANG: 'en_US.UTF-8' })).toBe(true);
    expect(asciiFromEnv({ LC_CTYPE: 'en_US.UTF-8', LANG: 'C' })).toBe(false);
    expect(asciiFromEnv({ LC_ALL: '', LC_CTYPE: 'POSIX', LANG: 'en_US.UTF-8' })).toBe(true);
  });

  it('--ascii and --no-ascii win over the locale', () => {
    expect(resolveAscii(true, { LANG: 'en_US.UTF-8' })).toBe(true);
    expect(resolveAscii(false, { LANG: 'C' })).toBe(false);
    expect(resolveAscii(undefined, { LANG: 'C' })).toBe(true);
  });
});

describe('folding a frame to ASCII', () => {
  it('a braille cell says where its dots sit', () => {
    expect(brailleToAscii(0)).toBe(' ');
    expect(brailleToAscii(0x01)).toBe("'"); // top row
    expect(brailleToAscii(0x02 | 0x10)).toBe('-'); // second row
    expect(brailleToAscii(0x04)).toBe('-'); // third row
    expect(brailleToAscii(0x40 | 0x80)).toBe('.'); // bottom row
    expect(brailleToAscii(0x01 | 0x02 | 0x04)).toBe('|'); // a steep run
  });

  it('charts, sparklines and gauges become ASCII of the same width', () => {
    const points = [5.7, 5.72, 5.69, 5.71, 5.74, 5.7, 5.68].map((value, i) => ({ step: i + 1, value }));
    const rows = plotSeriesSegments([{ points }], 30, 4).map((row) => row.map((s) => s.text).join(''));
    const spark = sparkline([0, 1, 2, 3, 4, 5, 6, 7]);
    const bar = gauge(60, 100, 10, { markAt: 0.8 });
    for (const s of [...rows, spark, bar]) {
      const folded = foldToAscii(s);
      expect(folded).toMatch(PRINTABLE_ASCII);
      expect([...folded]).toHaveLength([...s].length);
    }
    expect(foldToAscii(spark)).toBe('_.,-=+*#');
    expect(foldToAscii(bar)).toBe('######..|.  60%');
    expect(rows.map(foldToAscii).join('\n')).toMatch(/[-'.|]/);
  });

  it('typography and rules have ASCII look-alikes; anything else is one ?', () => {
    expect(foldToAscii('a · b – c … ↑↓ → 41°C ’ ─│┼')).toBe("a | b - c ~ ^v > 41 C ' -|+");
    expect(foldToAscii('λ')).toBe('?');
  });

  it('remote text: look-alikes, else one ? per character; combining marks go with their base', () => {
    expect(asciiText('café e\u0301 日本 😀 → ok')).toBe('caf? e ?? ? > ok');
    expect(asciiText('plain')).toBe('plain');
  });

  it('leaves escape sequences (Ink’s styling) alone', () => {
    expect(foldToAscii('\u001b[1m█\u001b[22m')).toBe('\u001b[1m#\u001b[22m');
  });
});
