/**
 * The newest bisection of the notebook: its sides and changes, the trials table (trial, cell, env
 * delta vs good, verdict, steps reached, stall location) as it fills in, and the conclusion. A pure
 * view of the notebook record (src/bisect/summary.ts builds the rows).
 */
import { Box, Text } from 'ink';
import { describeChange } from '../../src/bisect/delta.js';
import { conclusionOf, trialRows } from '../../src/bisect/summary.js';
import { notAppliedLines, posteriorLines, rowCells, TABLE_HEAD } from '../../src/bisect/table.js';
import type { Notebook } from '../../src/notebook/model.js';
import { useClean } from '../display.js';
import { padCut } from '../format.js';
import type { PaneProps } from '../Rows.js';
import { tone } from '../theme.js';

export function BisectView({ notebook, width, height, color }: PaneProps & { notebook: Notebook }) {
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
  // columns fit their content; the location takes what is left
  const table = [TABLE_HEAD, ...rows.map((r) => rowCells(r))];
  const fit = TABLE_HEAD.map((_, i) => Math.max(...table.map((r) => (r[i] ?? '').length)));
  fit[2] = Math.min(fit[2]!, Math.max(24, Math.floor(width * 0.4)));
  const used = fit.slice(0, 5).reduce((sum, w) => sum + w + 2, 0);
  const widths = [...fit.slice(0, 5), Math.max(12, width - used - 1)];
  const line = (cells: string[]) => cells.map((c, i) => padCut(clean(c), widths[i] ?? 8)).join('  ');
  const conclusion = conclusionOf(notebook, b);
  // the candidates and their posterior under the table, as it runs; runs whose change did not apply
  const belief = posteriorLines(b, Math.max(8, Math.min(30, width - 60)));
  const skipped = notAppliedLines(notebook, b).slice(-3);
  const rowsShown = Math.max(1, height - 5 - belief.length - skipped.length);
  const good = b.result?.status === 'found';
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        bisect {b.id} · good {clean(side(b.good))} vs bad {clean(side(b.bad))} · class {b.verdictClass ?? '?'}{' '}
        · {b.changes.length} changes · {state}
        {b.result
          ? ` · ${b.result.runs} runs`
          : b.posterior
            ? ` · ${b.posterior.evidence} runs as evidence`
            : ''}{' '}
        <Text dimColor>· Esc back</Text>
      </Text>
      <Text wrap="truncate-end" dimColor>
        changes: {clean(b.changes.map(describeChange).join(' · '))}
      </Text>
      <Text bold wrap="truncate-end">
        {line(TABLE_HEAD)}
      </Text>
      {rows.slice(-rowsShown).map((r) => (
        <Text
          key={r.trial}
          wrap="truncate-end"
          color={tone(color, r.outcome === 'fail' ? 'bad' : r.outcome === 'pass' ? 'ok' : 'warn')}
        >
          {line(rowCells(r))}
        </Text>
      ))}
      {belief.map((l, i) => (
        <Text key={l} wrap="truncate-end" dimColor={i === belief.length - 1}>
          {clean(l)}
        </Text>
      ))}
      {skipped.map((l) => (
        <Text key={l} wrap="truncate-end" color={tone(color, 'warn')}>
          {clean(l)}
        </Text>
      ))}
      <Text bold wrap="truncate-end" color={tone(color, good ? 'accent' : 'warn')}>
        {clean(conclusion)}
      </Text>
    </Box>
  );
}
