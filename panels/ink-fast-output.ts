/**
 * A faster `Output.get()` for Ink 6.8, the step that turns a laid-out tree into the frame's lines.
 * Ink's own builds a fresh grid of cell objects each frame and tokenizes every line's ANSI, measures
 * every character with string-width and slices every clipped line with slice-ansi, with caches that
 * live for one frame only: about 10 ms for this dashboard, most of the CPU a steady dashboard
 * spends. This one keeps the parsed lines of the last two frames (a line unchanged since the last
 * frame costs a Map lookup), clips by slicing the parsed cells, and joins rows once.
 *
 * It only handles what `parseLine` models (single-width characters and SGR styles); a frame with
 * anything else (CJK or emoji in a log line, another escape) is left to Ink's own `get()`. Patched
 * only on the Ink version it was written against; test/components/fast-output.test.tsx checks that
 * frames are cell-for-cell what Ink's own `get()` makes.
 */
import { type CellLine, parseLine, sgrTransition } from './frame-cells.js';
import { importInk68 } from './ink-internals.js';

interface Clip {
  x1?: number;
  x2?: number;
  y1?: number;
  y2?: number;
}

type Operation =
  | {
      type: 'write';
      x: number;
      y: number;
      text: string;
      transformers: Array<(s: string, i: number) => string>;
    }
  | { type: 'clip'; clip: Clip }
  | { type: 'unclip' };

interface OutputLike {
  width: number;
  height: number;
  operations: Operation[];
}

type Get = (this: OutputLike) => { output: string; height: number };

/** the lines parsed for this frame and for the one before: what a steady screen asks for again */
let cache = new Map<string, CellLine>();
let previous = new Map<string, CellLine>();

function cells(line: string): CellLine {
  let c = cache.get(line);
  if (c === undefined) {
    c = previous.get(line) ?? parseLine(line);
    cache.set(line, c);
  }
  return c;
}

/** Signals that a frame holds something only Ink's own get() handles. */
class Complex extends Error {}

/**
 * Cells [from, to) back to text. Styles change by transitions, never by a reset: an enclosing
 * transform (a Text's colour around nested styled Text) must still apply beneath them.
 */
function serialize(chars: string[], styles: string[], from: number, to: number): string {
  let out = '';
  let cur = '';
  for (let i = from; i < to; i++) {
    // a write past the right edge leaves holes, which Ink drops
    if (chars[i] === undefined) continue;
    const st = styles[i]!;
    out += sgrTransition(cur, st) + chars[i];
    cur = st;
  }
  return out + sgrTransition(cur, '');
}

function rowText(chars: string[], styles: string[]): string {
  let end = chars.length;
  // Ink trims trailing blanks; a styled blank (an inverse bar) is content
  while (end > 0 && chars[end - 1] === ' ' && styles[end - 1] === '') end--;
  return serialize(chars, styles, 0, end);
}

function fastGet(this: OutputLike): { output: string; height: number } {
  const { width, height } = this;
  previous = cache;
  cache = new Map();
  const chars: string[][] = [];
  const styles: string[][] = [];
  for (let y = 0; y < height; y++) {
    chars.push(new Array<string>(width).fill(' '));
    styles.push(new Array<string>(width).fill(''));
  }
  const clips: Clip[] = [];
  for (const op of this.operations) {
    if (op.type === 'clip') clips.push(op.clip);
    else if (op.type === 'unclip') clips.pop();
    else {
      const clip = clips.at(-1);
      const lines = op.text.split('\n');
      const cx = clip && typeof clip.x1 === 'number' && typeof clip.x2 === 'number';
      const cy = clip && typeof clip.y1 === 'number' && typeof clip.y2 === 'number';
      const top = cy ? Math.max(0, clip!.y1! - op.y) : 0;
      for (let i = top; i < lines.length; i++) {
        const y = op.y + i;
        if (cy && y >= clip!.y2!) break;
        const rowChars = chars[y];
        if (rowChars === undefined) continue;
        let c = cells(lines[i]!);
        if (c.complex) throw new Complex();
        let from = 0;
        let to = c.chars.length;
        if (cx) {
          from = Math.max(0, clip!.x1! - op.x);
          to = Math.min(to, clip!.x2! - op.x);
        }
        if (to <= from) continue;
        if (from > 0 || to < c.chars.length) c = cells(serialize(c.chars, c.styles, from, to));
        // as in Ink: transformers (colours, the ASCII fold) see the clipped line, numbered from the
        // first line inside the clip
        if (op.transformers.length > 0) {
          let text = c.raw;
          for (const t of op.transformers) text = t(text, i - top);
          c = cells(text);
          if (c.complex) throw new Complex();
        }
        const rowStyles = styles[y]!;
        const x = op.x + from;
        for (let k = 0; k < c.chars.length; k++) {
          rowChars[x + k] = c.chars[k]!;
          rowStyles[x + k] = c.styles[k]!;
        }
      }
    }
  }
  const out: string[] = [];
  for (let y = 0; y < height; y++) out.push(rowText(chars[y]!, styles[y]!));
  return { output: out.join('\n'), height };
}

let patched = false;

/**
 * Install the faster get() on Ink's Output class (once). Returns false, changing nothing, for an
 * Ink other than 6.8.x or one whose files are not where 6.8 keeps them.
 */
export async function installFastOutput(): Promise<boolean> {
  if (patched) return true;
  try {
    const mod = await importInk68<{ default: { prototype: { get: Get } } }>('output.js');
    if (mod === null) return false;
    const proto = mod.default.prototype;
    const original = proto.get;
    proto.get = function get(this: OutputLike) {
      try {
        return fastGet.call(this);
      } catch (e) {
        if (e instanceof Complex) return original.call(this);
        throw e;
      }
    };
    patched = true;
    return true;
  } catch {
    return false;
  }
}

export { fastGet as fastGetForTest };
