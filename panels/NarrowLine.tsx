/**
 * One line of styled pieces whose characters are all one column wide (a braille chart row, box
 * drawing, `·`). Ink measures every text node's width with string-width twice a frame (for the
 * layout and again to draw), and any character outside printable ASCII sends the whole line through
 * a grapheme segmenter and an emoji regex: on a dashboard that is most of what a frame costs
 * (the two braille charts alone are ~1,000 such characters a frame). Here Ink lays out and clips an
 * ASCII stand-in of the same length, and a transform puts the real characters back as the line is
 * written, keeping the pieces' styles. A line holding anything wider (CJK, emoji, a surrogate pair)
 * is drawn as plain nested `<Text>`, as before.
 */
import { Text, Transform } from 'ink';
import { positional } from './format.js';
import { allNarrowUnits } from './frame-cells.js';

export interface LinePiece {
  text: string;
  color?: string;
  dimColor?: boolean;
  bold?: boolean;
}

/** `styled` with its visible characters replaced, in order, by those of `real`; escapes kept. */
export function putBack(styled: string, real: string): string {
  let out = '';
  let k = 0;
  for (let i = 0; i < styled.length; i++) {
    const c = styled.charCodeAt(i);
    if (c === 0x1b && styled[i + 1] === '[') {
      // a CSI sequence: parameters, then one final byte in @..~
      let j = i + 2;
      while (j < styled.length && !(styled.charCodeAt(j) >= 0x40 && styled.charCodeAt(j) <= 0x7e)) j++;
      out += styled.slice(i, j + 1);
      i = j;
    } else out += k < real.length ? real[k++] : styled[i];
  }
  return out;
}

const STAND_IN = 'x';

export interface NarrowLineProps {
  pieces: LinePiece[];
  /** the columns the line may take: longer content is cut here, never wrapped */
  width: number;
}

export function NarrowLine({ pieces, width }: NarrowLineProps) {
  let room = Math.max(0, width);
  const cut: LinePiece[] = [];
  for (const p of pieces) {
    if (room === 0) break;
    const text = p.text.length > room ? p.text.slice(0, room) : p.text;
    room -= text.length;
    cut.push({ ...p, text });
  }
  const real = cut.map((p) => p.text).join('');
  if (!allNarrowUnits(real))
    return (
      <Text wrap="truncate-end">
        {positional(pieces).map(({ key, item: p }) => (
          <Text key={key} color={p.color} dimColor={p.dimColor} bold={p.bold}>
            {p.text}
          </Text>
        ))}
      </Text>
    );
  return (
    <Transform transform={(line) => putBack(line, real)}>
      {positional(cut).map(({ key, item: p }) => (
        <Text key={key} color={p.color} dimColor={p.dimColor} bold={p.bold}>
          {STAND_IN.repeat(p.text.length)}
        </Text>
      ))}
    </Transform>
  );
}
