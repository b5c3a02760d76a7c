import { Text } from 'ink';
import { render } from 'ink-testing-library';
import { isValidElement, type ReactElement } from 'react';
import { describe, expect, it } from 'vitest';
import { positional } from '../../panels/format.js';
import { type LinePiece, NarrowLine, putBack } from '../../panels/NarrowLine.js';

/** the same pieces as plain nested Text: what NarrowLine must draw cell for cell */
function plain(pieces: LinePiece[]) {
  return (
    <Text wrap="truncate-end">
      {positional(pieces).map(({ key, item: p }) => (
        <Text key={key} color={p.color} dimColor={p.dimColor} bold={p.bold}>
          {p.text}
        </Text>
      ))}
    </Text>
  );
}

const CHART_ROW: LinePiece[] = [
  { text: '5.75┤', dimColor: true },
  { text: '⠀⠀⢀⠤⣒', dimColor: true },
  { text: '⡄⠀⣠', color: 'cyan' },
  { text: ' · r0 – ok', bold: true },
];

/** every string child of the element tree */
function texts(node: unknown): string[] {
  if (typeof node === 'string') return [node];
  if (Array.isArray(node)) return node.flatMap(texts);
  if (isValidElement(node)) return texts((node as ReactElement<{ children?: unknown }>).props.children);
  return [];
}

describe('NarrowLine', () => {
  it('puts the real characters back over a styled stand-in, escapes untouched', () => {
    const styled = '\x1b[2mxxxx\x1b[22m\x1b[36mxx\x1b[39m';
    expect(putBack(styled, '5┤⠀⣒⡄⠀')).toBe('\x1b[2m5┤⠀⣒\x1b[22m\x1b[36m⡄⠀\x1b[39m');
  });

  it('draws exactly what plain nested Text draws, colours included', () => {
    for (const color of [false, true]) {
      const pieces = color ? CHART_ROW : CHART_ROW.map((p) => ({ ...p, color: undefined }));
      const ours = render(<NarrowLine pieces={pieces} width={40} />).lastFrame();
      const theirs = render(plain(pieces)).lastFrame();
      expect(ours).toBe(theirs);
      expect(ours).toContain('⠀⠀⢀⠤⣒');
    }
  });

  it('lets Ink lay out only ASCII: the braille never reaches string-width', () => {
    const tree = NarrowLine({ pieces: CHART_ROW, width: 40 });
    const inside = texts(tree).join('');
    expect(inside).toMatch(/^x+$/);
    expect(inside).toHaveLength(CHART_ROW.map((p) => p.text).join('').length);
  });

  it('cuts a line longer than its width instead of wrapping it', () => {
    const frame = render(<NarrowLine pieces={CHART_ROW} width={8} />).lastFrame();
    expect(frame).toBe('5.75┤⠀⠀⢀');
  });

  it('draws a line with wide characters as plain Text (Ink measures those)', () => {
    const pieces: LinePiece[] = [{ text: 'loss 損失 ' }, { text: '⠀⣒', color: 'cyan' }];
    const tree = NarrowLine({ pieces, width: 40 });
    expect(texts(tree).join('')).toBe('loss 損失 ⠀⣒');
    expect(render(<NarrowLine pieces={pieces} width={40} />).lastFrame()).toBe(
      render(plain(pieces)).lastFrame(),
    );
  });
});
