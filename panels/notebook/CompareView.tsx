/**
 * Two marked cells side by side: env and command differences, loss and toks/s overlaid on shared
 * axes (one colour per side: two cells never share one, whatever their ids), and a summary table.
 */
import { Box, Text } from 'ink';
import { compareCells } from '../../src/notebook/compare.js';
import type { Cell } from '../../src/notebook/model.js';
import { proofLine } from '../../src/notebook/run-proof.js';
import { plotSeriesSegments } from '../charts/braille.js';
import { useClean } from '../display.js';
import { padCut } from '../format.js';
import type { PaneProps } from '../Rows.js';
import { tone } from '../theme.js';

/** the two sides' terminal colours, the first two hues of the report's SVG palette */
export const SIDE_COLOURS = ['blue', 'red'] as const;

export function sideColour(side: 0 | 1, color: boolean): string | undefined {
  return color ? SIDE_COLOURS[side] : undefined;
}

/** the charts drawn, each with its title and the cells' series it plots */
const CHARTS = [
  ['loss', 'loss'],
  ['toks/s', 'toks'],
] as const;

function Chart({
  title,
  a,
  b,
  pick,
  width,
  height,
  color,
}: PaneProps & {
  title: string;
  a: Cell;
  b: Cell;
  pick: (c: Cell) => Array<[number, number]>;
}) {
  const series = [a, b].map((c) => ({ points: pick(c).map(([step, value]) => ({ step, value })) }));
  const rows = plotSeriesSegments(series, width, height);
  const colours = [sideColour(0, color), sideColour(1, color)];
  // without colours the two lines are told apart by the legend's order only: say so
  return (
    <Box flexDirection="column" width={width}>
      <Text bold wrap="truncate-end">
        {title} <Text color={colours[0]}>━ {a.id}</Text> <Text color={colours[1]}>━ {b.id}</Text>
        {color ? '' : ' (no colour: later cell drawn on top)'}
      </Text>
      {rows.map((segs, y) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows of a fixed-size canvas
        <Text key={y} wrap="truncate-end">
          {segs.map((s, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: segments of one row
            <Text key={i} color={s.series >= 0 ? colours[s.series] : undefined}>
              {s.text}
            </Text>
          ))}
        </Text>
      ))}
    </Box>
  );
}

export function CompareView({ a, b, width, height, color }: PaneProps & { a: Cell; b: Cell }) {
  const clean = useClean();
  const cmp = compareCells(a, b);
  const col = Math.max(12, Math.floor((width - 22) / 2));
  const chartH = Math.max(3, Math.min(8, height - cmp.summary.length - cmp.ab.length - cmp.env.length - 6));
  const chartW = Math.max(20, Math.floor((width - 3) / 2));
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        compare{' '}
        <Text color={sideColour(0, color)}>
          {a.id} {a.lane.name}
        </Text>{' '}
        vs{' '}
        <Text color={sideColour(1, color)}>
          {b.id} {b.lane.name}
        </Text>{' '}
        <Text dimColor>· Esc back</Text>
      </Text>
      <Text bold>env diff</Text>
      {cmp.env.length === 0 ? <Text dimColor> same env</Text> : null}
      {cmp.env.map((d) => (
        <Text key={d.name} wrap="truncate-end">
          {'  '}
          {padCut(d.name, 22)} {padCut(clean(d.a ?? '(unset)'), col)} {clean(d.b ?? '(unset)')}
        </Text>
      ))}
      {[a, b].map((c) =>
        c.proof?.notApplied.length ? (
          <Text key={`proof-${c.id}`} wrap="truncate-end" color={tone(color, 'warn')}>
            {'  '}
            {c.id}: {clean(proofLine(c.proof))}
          </Text>
        ) : null,
      )}
      {cmp.command.onlyA.length || cmp.command.onlyB.length ? (
        <Text wrap="truncate-end">
          command: only {a.id}: {clean(cmp.command.onlyA.join(' ') || '–')} · only {b.id}:{' '}
          {clean(cmp.command.onlyB.join(' ') || '–')}
        </Text>
      ) : (
        <Text dimColor>command: same (run dirs aside)</Text>
      )}
      <Box columnGap={2}>
        {CHARTS.map(([title, metric]) => (
          <Chart
            key={metric}
            title={title}
            a={a}
            b={b}
            pick={(c) => c.series[metric]}
            width={chartW}
            height={chartH}
            color={color}
          />
        ))}
      </Box>
      {cmp.summary.map((r) => (
        <Text key={r.label} wrap="truncate-end">
          {padCut(r.label, 20)} {padCut(clean(r.a), col)} {clean(r.b)}
        </Text>
      ))}
      {cmp.ab.map((line) => (
        <Text key={line} wrap="truncate-end">
          {line}
        </Text>
      ))}
    </Box>
  );
}
