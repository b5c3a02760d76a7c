/**
 * What a terminal shows, as text, from what the app wrote to it: enough of a terminal to tell which
 * screen is up (the notebook's list, the lane picker, a cell's dashboard) when the frame writer
 * sends only the cells that changed, so a line's words seldom arrive together. Absolute cursor
 * moves, clear screen, erase line and erase to its end, CR/LF and printable text; colours and every
 * other escape are skipped. A wide character takes one cell here: only for finding words.
 */
/** CSI (its parameters and final byte), OSC, or a two-byte escape */
const ESCAPE = /^\x1b(?:\[([0-9;?]*)[ -/]*([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/;
/** the start of one, not finished yet */
const PARTIAL = /^\x1b(?:\[[0-9;?]*[ -/]*|\][^\x07\x1b]*)?$/;

export class ScreenText {
  private cells: string[][];
  private row = 0;
  private col = 0;
  /** an escape cut off at the end of the last write, finished by the next */
  private pending = '';

  constructor(
    readonly columns: number,
    readonly rows: number,
  ) {
    this.cells = this.blank();
  }

  private blank(): string[][] {
    return Array.from({ length: this.rows }, () => Array<string>(this.columns).fill(' '));
  }

  write(chunk: string): void {
    const s = this.pending + chunk;
    this.pending = '';
    for (let i = 0; i < s.length; ) {
      if (s[i] === '\x1b') {
        const m = ESCAPE.exec(s.slice(i));
        if (m === null) {
          // cut off by the chunk's end: wait for the rest (a short one only; else not an escape)
          if (s.length - i < 32 && PARTIAL.test(s.slice(i))) {
            this.pending = s.slice(i);
            return;
          }
          i++;
          continue;
        }
        this.escape(m[1] ?? '', m[2] ?? '');
        i += m[0].length;
        continue;
      }
      const ch = String.fromCodePoint(s.codePointAt(i)!);
      i += ch.length;
      if (ch === '\r') this.col = 0;
      else if (ch === '\n') this.row = Math.min(this.row + 1, this.rows - 1);
      else if (ch >= ' ' && this.col < this.columns) this.cells[this.row]![this.col++] = ch;
    }
  }

  private escape(params: string, cmd: string): void {
    if (cmd === 'H') {
      const [r, c] = params === '' ? [1, 1] : params.split(';').map(Number);
      this.row = Math.min(Math.max((r || 1) - 1, 0), this.rows - 1);
      this.col = Math.min(Math.max((c || 1) - 1, 0), this.columns);
    } else if (cmd === 'J' && params === '2') this.cells = this.blank();
    else if (cmd === 'K' && params === '2') this.cells[this.row]!.fill(' ');
    else if (cmd === 'K' && (params === '' || params === '0')) this.cells[this.row]!.fill(' ', this.col);
  }

  /** the screen's lines, trailing blanks cut */
  text(): string {
    return this.cells.map((r) => r.join('').trimEnd()).join('\n');
  }
}
