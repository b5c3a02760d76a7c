/**
 * The frame writer sends only changed cells; what the terminal shows after each update must be the
 * frame, every cell (character and style), with nothing left from an earlier frame (no ghost
 * lines). A small terminal model replays what the writer sent: absolute cursor moves, erase line,
 * erase to end of line, clear screen, SGR, and printable text with pending wrap at the last column.
 */
import { describe, expect, it } from 'vitest';
import { parseLine, sgrOf } from '../../panels/frame-cells.js';
import { FrameWriter } from '../../panels/frame-writer.js';

interface Cell {
  ch: string;
  st: string;
}

class Screen {
  cells: Cell[][];
  row = 0;
  col = 0;
  style = '';
  written = '';
  constructor(
    readonly columns: number,
    readonly rows: number,
  ) {
    this.cells = this.blank();
  }
  private blank(): Cell[][] {
    return Array.from({ length: this.rows }, () =>
      Array.from({ length: this.columns }, () => ({ ch: ' ', st: '' })),
    );
  }
  write(s: string): void {
    this.written += s;
    for (let i = 0; i < s.length; ) {
      if (s[i] === '\x1b') {
        const m = /^\x1b\[([0-9;?]*)([A-Za-z])/.exec(s.slice(i));
        if (m === null) throw new Error(`unknown escape at ${JSON.stringify(s.slice(i, i + 10))}`);
        const [all, params, cmd] = m as unknown as [string, string, string];
        if (cmd === 'H') {
          const [r, c] = params === '' ? [1, 1] : params.split(';').map(Number);
          this.row = (r ?? 1) - 1;
          this.col = (c ?? 1) - 1;
        } else if (cmd === 'J' && params === '2') this.cells = this.blank();
        else if (cmd === 'K' && params === '2') this.cells[this.row] = this.blank()[0]!;
        else if (cmd === 'K' && params === '')
          for (let c = Math.min(this.col, this.columns - 1); c < this.columns; c++)
            this.cells[this.row]![c] = { ch: ' ', st: '' };
        // the style after this SGR: the current one re-created, then this sequence applied
        else if (cmd === 'm') this.style = parseLine(`${sgrOf(this.style)}${all}x`).styles[0] ?? '';
        else if (cmd !== 'h' && cmd !== 'l') throw new Error(`unexpected ${JSON.stringify(all)}`);
        i += all.length;
        continue;
      }
      const ch = String.fromCodePoint(s.codePointAt(i)!);
      if (ch === '\n' || ch === '\r') throw new Error('the writer must never move the cursor by text');
      if (this.col >= this.columns)
        throw new Error(`wrote past the right edge on row ${this.row}: ${JSON.stringify(s.slice(0, 400))}`);
      this.cells[this.row]![this.col] = { ch, st: this.style };
      this.col++;
      i += ch.length;
    }
  }
  text(): Array<{ chars: string; styles: string[] }> {
    return this.cells.map((row) => {
      let end = row.length;
      while (end > 0 && row[end - 1]!.ch === ' ' && row[end - 1]!.st === '') end--;
      return {
        chars: row
          .slice(0, end)
          .map((c) => c.ch)
          .join(''),
        styles: row.slice(0, end).map((c) => c.st),
      };
    });
  }
}

function expected(frame: string, rows: number, cols = Number.POSITIVE_INFINITY) {
  const lines = frame.split('\n');
  return Array.from({ length: rows }, (_, i) => {
    const c = parseLine(lines[i] ?? '');
    let end = Math.min(c.chars.length, cols);
    while (end > 0 && c.chars[end - 1] === ' ' && c.styles[end - 1] === '') end--;
    return { chars: c.chars.slice(0, end).join(''), styles: c.styles.slice(0, end) };
  });
}

/** deterministic pseudo-random frames: styled words, full-width lines, shrinking and growing */
function frames(seed: number, count: number, cols: number, rows: number): string[] {
  let x = seed;
  const rnd = (n: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % n;
  };
  const words = [
    'step',
    '\x1b[31mred\x1b[39m',
    '\x1b[1mbold\x1b[22m',
    '⠿⡇⣀',
    '·',
    '\x1b[7m inv \x1b[27m',
    '12:04:05',
  ];
  const line = () => {
    let l = '';
    const n = rnd(14);
    for (let i = 0; i < n; i++) l += `${words[rnd(words.length)]} `;
    return rnd(6) === 0 ? 'x'.repeat(cols) : l;
  };
  const out: string[] = [];
  let cur = Array.from({ length: rows }, line);
  for (let f = 0; f < count; f++) {
    cur = cur.map((l) => (rnd(4) === 0 ? line() : l));
    out.push(cur.slice(0, rows - rnd(3)).join('\n'));
  }
  return out;
}

describe('the frame writer', () => {
  it('leaves exactly each frame on screen, whatever changed between them', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const screen = new Screen(60, 12);
      const w = new FrameWriter(screen);
      for (const f of frames(seed, 60, 60, 12)) {
        w.frame(f);
        // every visible line is what the frame holds (cut at the right edge), nothing after it
        expect(screen.text()).toEqual(expected(f, 12, 60));
      }
    }
  });

  it('sends only the changed cells: a clock tick costs a few bytes', () => {
    const screen = new Screen(120, 40);
    const w = new FrameWriter(screen);
    const frame = (t: string) =>
      [
        `nsa-dbg local · lane x · running · ${t} · step 5`,
        ...Array.from({ length: 38 }, (_, i) => `row ${i} ${'·'.repeat(90)}`),
      ].join('\n');
    w.frame(frame('12:04:05'));
    const first = w.bytes;
    expect(first).toBeGreaterThan(120 * 38);
    w.frame(frame('12:04:06'));
    expect(w.bytes - first).toBeLessThan(20);
    w.frame(frame('12:04:06'));
    expect(w.bytes - first).toBeLessThan(20);
  });

  it('keeps styles right when a styled run changes in the middle of a line', () => {
    const screen = new Screen(40, 3);
    const w = new FrameWriter(screen);
    w.frame('ab \x1b[31mred\x1b[39m cd\nsecond');
    w.frame('ab \x1b[32mgrn\x1b[39m cd\nsecond');
    expect(screen.text()[0]).toEqual(expected('ab \x1b[32mgrn\x1b[39m cd', 1)[0]);
  });

  it('repaints everything after invalidate (the screen was taken by another program)', () => {
    const screen = new Screen(20, 3);
    const w = new FrameWriter(screen);
    w.frame('one\ntwo');
    screen.cells[0]![0] = { ch: '#', st: '' };
    w.invalidate();
    w.frame('one\ntwo');
    expect(screen.text()[0]!.chars).toBe('one');
  });

  it('repaints the newest frame whole on its own (back from Ctrl+Z: the shell wrote over the screen)', () => {
    const screen = new Screen(20, 3);
    const w = new FrameWriter(screen);
    w.frame('one\ntwo');
    w.frame('one\nthree');
    for (const row of screen.cells) row.fill({ ch: '$', st: '' });
    const before = w.bytes;
    w.repaint();
    expect(w.bytes).toBeGreaterThan(before);
    expect(screen.text().map((l) => l.chars)).toEqual(['one', 'three', '']);
  });
});
