import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/ingest/line-splitter.js';
import { sanitizeText, stripTerminalEscapes } from '../../src/util/ansi.js';

const ESC = '\u001b';
const BEL = '\u0007';
const ST = `${ESC}\\`;
/** Anything a terminal acts on instead of drawing: C0 (tab and newline too, for a row), DEL, C1, bidi. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('sanitizeText: every class of sequence is removed whole', () => {
  it.each([
    ['CSI clear screen and home', `a${ESC}[2J${ESC}[Hb`],
    ['CSI cursor moves', `a${ESC}[10;5H${ESC}[3A${ESC}[12Cb`],
    ['CSI private modes (alternate screen, cursor, mouse)', `a${ESC}[?1049h${ESC}[?25l${ESC}[?1000hb`],
    ['CSI with intermediates', `a${ESC}[2 qb`],
    ['SGR colours', `a${ESC}[1;31mb${ESC}[0m`],
    ['8-bit CSI (U+009B)', 'a\u009b2J\u009b?1049hb'],
    ['OSC 0 title, BEL-terminated', `a${ESC}]0;PWNED${BEL}b`],
    ['OSC 2 title, ST-terminated', `a${ESC}]2;PWNED${ST}b`],
    ['OSC 52 clipboard write', `a${ESC}]52;c;UFdORUQ=${BEL}b`],
    ['OSC 8 hyperlink', `a${ESC}]8;;https://PWNED${ST}b${ESC}]8;;${ST}`],
    ['8-bit OSC and ST', 'a\u009d0;PWNED\u009cb'],
    ['DCS (sixel)', `a${ESC}Pq#0;2;0;0;0PWNED${ST}b`],
    ['DCS tmux passthrough', `a${ESC}Ptmux;${ESC}${ESC}]52;c;PWNED${BEL}${ST}b`],
    ['8-bit DCS', 'a\u0090PWNED\u009cb'],
    ['SOS, PM, APC (kitty graphics)', `a${ESC}XPWNED${ST}${ESC}^PWNED${ST}${ESC}_Gf=100;PWNED${ST}b`],
    ['screen/tmux window title', `a${ESC}kPWNED${ST}b`],
    ['single-character escapes: RIS, DECSC/DECRC, RI, charset', `a${ESC}c${ESC}7${ESC}8${ESC}M${ESC}(0b`],
    ['C0 controls: BEL, BS, NUL, SO, CAN, SUB', `a${BEL}\b\u0000\u000e\u0018\u001ab`],
    ['DEL and C1 controls (NEL, RI, lone ST)', 'a\u007f\u0085\u008d\u009cb'],
    ['bidi overrides, embeddings and isolates', 'a\u202e\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069b'],
    ['bidi marks and BOM', 'a\u200e\u200f\u061c\ufeffb'],
  ])('%s', (_name, input) => {
    const out = sanitizeText(input);
    expect(out).toBe('ab');
    expect(out).not.toMatch(UNSAFE);
    expect(out).not.toContain('PWNED');
  });

  it('a line break inside a row becomes a space, so one row stays one line', () => {
    expect(sanitizeText('a\r\nb\nc\rd\u000be\u000cf\u2028g\u2029h')).toBe('a b c d e f g h');
  });

  it('tabs are expanded to the next 8-column stop', () => {
    expect(sanitizeText('a\tb')).toBe('a       b');
    expect(sanitizeText('abcdefgh\tx')).toBe(`abcdefgh${' '.repeat(8)}x`);
    expect(sanitizeText('\t\tx')).toBe(`${' '.repeat(16)}x`);
  });

  it('returns clean text as it is, the same string', () => {
    const s = 'step 0017 | loss 5.7019 | toks/s 72 · 日本語 ✓';
    expect(sanitizeText(s)).toBe(s);
  });

  it('a lone surrogate (from JSON) becomes U+FFFD; pairs are kept', () => {
    expect(sanitizeText('a\ud800b\udc00c')).toBe('a\ufffdb\ufffdc');
    expect(sanitizeText('ok 😀')).toBe('ok 😀');
  });
});

describe('split sequences', () => {
  const hostile = [
    'head',
    `${ESC}]0;PWNED-TITLE${BEL}`,
    `${ESC}[2J`,
    '\u009b31m',
    `${ESC}P+q544e${ST}`,
    '\u202e',
    `${ESC}]52;c;PWNED${ST}`,
    'tail',
  ].join('');

  it('a sequence cut at any point leaves no control character in either half', () => {
    for (let i = 0; i <= hostile.length; i++) {
      for (const part of [hostile.slice(0, i), hostile.slice(i)]) {
        expect(sanitizeText(part)).not.toMatch(UNSAFE);
        expect(stripTerminalEscapes(part)).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
      }
    }
  });

  it('an unterminated string sequence is dropped to the end, payload included', () => {
    expect(sanitizeText(`ok ${ESC}]0;PWNED-ti`)).toBe('ok ');
    expect(sanitizeText(`ok ${ESC}[1;3`)).toBe('ok ');
    expect(sanitizeText(`ok ${ESC}`)).toBe('ok ');
  });

  it('bytes split inside a UTF-8 character are joined by the line splitter; invalid bytes are U+FFFD', () => {
    const splitter = new LineSplitter();
    const euro = Buffer.from('€', 'utf8');
    expect(splitter.push(Buffer.concat([Buffer.from('a'), euro.subarray(0, 1)]))).toEqual([]);
    expect(splitter.push(Buffer.concat([euro.subarray(1), Buffer.from('b\n')]))).toEqual(['a€b']);
    // a raw 0x9b byte is not UTF-8, so it is never read as the 8-bit CSI
    const [line] = splitter.push(Buffer.from([0x63, 0x9b, 0x32, 0x4a, 0xff, 0x0a]));
    expect(line).toBe('c\ufffd2J\ufffd');
    expect(sanitizeText(line ?? '')).toBe('c\ufffd2J\ufffd');
  });
});

describe('stripTerminalEscapes (the parsers)', () => {
  it('keeps tabs and newlines so records still parse, removes the rest', () => {
    expect(stripTerminalEscapes(`${ESC}[32mstep 0001\t| loss 5.7${ESC}[0m\n`)).toBe(
      'step 0001\t| loss 5.7\n',
    );
    expect(stripTerminalEscapes('a\u202eb\u0000c')).toBe('abc');
  });

  it('returns clean text as it is', () => {
    const s = 'step 0001 | loss 5.7014';
    expect(stripTerminalEscapes(s)).toBe(s);
  });
});
