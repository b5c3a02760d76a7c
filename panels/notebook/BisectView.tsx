/**
 * The newest bisection of the notebook: its sides and changes, the trials table (trial, cell, env
 * delta vs good, verdict, steps reached, stall location) as it fills in, and the conclusion. A pure
 * view of the notebook record (src/bisect/summary.ts builds the rows).
 */
import { Box, Text } from 'ink';
import { describeChange } from '../../src/bisect/delta.js';
import { conclusionOf, trialRows } from '../../src/bisect/summary.js';
import { rowCells, TABLE_HEAD } from '../../src/bisect/table.js';
import type { Notebook } from '../../src/notebook/model.js';
import { useClean } from '../display.js';
import { padCut } from '../format.js';
import { tone } from '../theme.js';

export function BisectView({
  notebook,
  width,
  height,
  color,
}: {
  notebook: Notebook;
  width: number;
  height: number;
  color: boolean;
}) {
  const clean = useClean();
  const list = notebook.bisections ?? [];
  const b = list.find((x) => x.state === 'running') ?? list[list.length - 1];
  if (!b) return <Text dimColor>no bisection yet: mark a GO cell and a NO-GO cell with m, then :bisect</Text>;
  const rows = trialRows(notebook, b);
  const side = (s: { lane: string; cell?: string }) => `${s.cell ? `${s.cell} ` : ''}${s.lane}`;
  const state =
    b.state === 'running'
      ? `running${rows.some((r) => r.outcome === 'running') ? ` trial ${rows.length - 1}` : ''}`
      : b.state;
  // fixed columns; the delta and the location share what is left
  const fixed = [5, 14, 0, 16, 5, 0];
  const rest = Math.max(20, width - fixed.reduce((s, w) => s + w + 1, 0) - 1);
  const widths = fixed.map((w, i) =>
    i === 2 ? Math.ceil(rest * 0.55) : i === 5 ? Math.floor(rest * 0.45) : w,
  );
  const line = (cells: string[]) => cells.map((c, i) => padCut(clean(c), widths[i] ?? 8)).join(' ');
  const conclusion = conclusionOf(notebook, b);
  const good = b.result?.status === 'found';
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        bisect {b.id} · good {clean(side(b.good))} vs bad {clean(side(b.bad))} · class {b.verdictClass ?? '?'}{' '}
        · {b.changes.length} changes · {state}
        {b.result ? ` · ${b.result.runs} runs` : ''} <Text dimColor>· Esc back</Text>
      </Text>
      <Text wrap="truncate-end" dimColor>
        changes: {clean(b.changes.map(describeChange).join(' · '))}
      </Text>
      <Text bold wrap="truncate-end">
        {line(TABLE_HEAD)}
      </Text>
      {rows.slice(-Math.max(1, height - 5)).map((r) => (
        <Text
          key={r.trial}
          wrap="truncate-end"
          color={tone(color, r.outcome === 'fail' ? 'bad' : r.outcome === 'pass' ? 'ok' : 'warn')}
        >
          {line(rowCells(r))}
        </Text>
      ))}
      <Text bold wrap="truncate-end" color={tone(color, good ? 'accent' : 'warn')}>
        {clean(conclusion)}
      </Text>
    </Box>
  );
}
