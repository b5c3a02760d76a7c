/**
 * The notebook view: cells with verdict badges (stale and marked flags, the diff to the parent),
 * the selected cell's detail, and the overlay of the moment. A pure view of the controller's state
 * and the UI state.
 */
import { Box, Text } from 'ink';
import type { ReactElement } from 'react';
import type { NotebookViewState } from '../../src/notebook/controller-types.js';
import type { KnownFlag } from '../../src/notebook/flags.js';
import {
  ENV_BINDINGS,
  footerHints,
  NOTEBOOK_BINDINGS,
  newBoxOffer,
  paletteLabel,
  paletteWords,
} from '../../src/notebook/keymap.js';
import type { NotebookUi } from '../../src/notebook/view-reducer.js';
import { useClean } from '../display.js';
import { padCut } from '../format.js';
import { tone } from '../theme.js';
import { BisectView } from './BisectView.js';
import { CellDetail, checkRows } from './CellDetail.js';
import { CompareView } from './CompareView.js';
import { badge, parentDiff, verdictText } from './cell-line.js';
import { EnvEditor, ValueEntry } from './EnvEditor.js';
import { quitPrompt, quittingLine } from './quit-line.js';
import { filterByName, flagItems, selectedQueued } from './route.js';

export interface NotebookScreenProps {
  state: NotebookViewState;
  ui: NotebookUi;
  /** `command`: what a new cell of the lane runs (shown under the picker) */
  lanes: ReadonlyArray<{ name: string; description: string; runs?: { command: string; cwd: string } }>;
  flags: readonly KnownFlag[];
  columns: number;
  rows: number;
  color: boolean;
  notice: string | null;
  /** quit was confirmed: the running cell is being stopped */
  quitting?: boolean;
}

/** what each part of the screen is drawn from */
export type ScreenPart = Pick<NotebookScreenProps, 'state' | 'ui' | 'color'>;

function Help({ color }: { color: boolean }) {
  const labels = NOTEBOOK_BINDINGS.map((b) =>
    [...b.keys, ...(b.palette ? [`:${paletteLabel(b.palette)}`] : [])].join(' / '),
  );
  const envLabels = ENV_BINDINGS.map((b) => b.keys.join(' / '));
  const w = Math.max(...labels.map((l) => l.length), ...envLabels.map((l) => l.length)) + 2;
  const row = (key: string, label: string, description: string) => (
    <Text key={key} wrap="truncate-end">
      <Text bold color={tone(color, 'info')}>
        {padCut(label, w)}
      </Text>
      {description}
    </Text>
  );
  return (
    <Box flexDirection="column">
      <Text bold>keys and : commands · Esc or ? closes</Text>
      {NOTEBOOK_BINDINGS.map((b, i) => row(b.command, labels[i] ?? '', b.description))}
      <Text bold>in the env editor (e)</Text>
      {ENV_BINDINGS.map((b, i) => row(`env-${b.command}`, envLabels[i] ?? '', b.description))}
    </Box>
  );
}

function Picker({
  title,
  items,
  ui,
  color,
  filtered,
}: {
  title: string;
  items: Array<{ name: string; description: string; runs?: { command: string; cwd: string } }>;
  ui: NotebookUi;
  color: boolean;
  /** the items are already filtered by the typed text */
  filtered?: boolean;
}) {
  const clean = useClean();
  const matches = filtered ? items : filterByName(items, ui.pick.text);
  // `runs`, not `command`: a lane's own `command` is its argv
  const command = matches[ui.pick.index]?.runs;
  return (
    <Box flexDirection="column">
      <Text bold>
        {title} <Text dimColor>filter: {ui.pick.text}_ · ↑/↓ Enter · Esc</Text>
      </Text>
      {matches.slice(0, 14).map((m, i) => (
        <Text key={m.name} inverse={i === ui.pick.index} wrap="truncate-end">
          <Text bold color={tone(color, 'info')}>
            {padCut(m.name, 24)}
          </Text>
          {clean(m.description)}
        </Text>
      ))}
      {matches.length === 0 ? <Text dimColor>nothing matches</Text> : null}
      {command ? (
        <>
          <Text wrap="truncate-end">
            <Text bold>runs: </Text>
            {clean(command.command)}
          </Text>
          <Text wrap="truncate-end">
            <Text bold>in: </Text>
            {clean(command.cwd)}
          </Text>
        </>
      ) : null}
    </Box>
  );
}

function CellList({ state, ui, color, height, width }: ScreenPart & { height: number; width: number }) {
  const clean = useClean();
  const cells = state.notebook.cells;
  const queued = state.queued;
  if (cells.length === 0 && queued.length === 0)
    return <Text dimColor>no cells yet: n starts one from a lane (:lane NAME), ? lists the keys</Text>;
  const total = cells.length + queued.length;
  const first = Math.max(0, Math.min(ui.selected - Math.floor(height / 2), total - height));
  const shownQueued = queued
    .map((q, i) => ({ q, at: cells.length + i }))
    .filter(({ at }) => at >= first && at < first + height);
  return (
    <Box flexDirection="column">
      {cells.slice(first, first + height).map((c, i) => {
        const b = badge(c);
        const at = first + i;
        const stale = state.stale.includes(c.id);
        const marked = ui.marked.includes(c.id);
        const link = parentDiff(c, cells);
        return (
          <Text key={c.id} inverse={at === ui.selected} wrap="truncate-end">
            {marked ? '◆' : ' '} {padCut(c.id, 4)}{' '}
            <Text bold color={tone(color, b.tone)}>
              {b.text}
            </Text>{' '}
            {padCut(c.lane.name, 18)} {stale ? <Text color={tone(color, 'warn')}>[stale] </Text> : null}
            {/* the verdict is cut so the parent diff stays on screen */}
            {link ? padCut(clean(verdictText(c)), Math.max(20, width - 70)) : clean(verdictText(c))}
            {link ? <Text color={tone(color, 'accent')}> ← {clean(link)}</Text> : null}
          </Text>
        );
      })}
      {shownQueued.map(({ q, at }, i) => (
        <Text key={q.qid} inverse={at === ui.selected} wrap="truncate-end">
          {'  '}
          {padCut(q.qid, 4)}{' '}
          <Text bold color={tone(color, 'muted')}>
            QUEUED
          </Text>{' '}
          {padCut(q.lane, 18)} {i === 0 && shownQueued[0]?.at === cells.length ? 'next' : 'waiting'}
          {q.what ? <Text color={tone(color, 'accent')}> ← {clean(q.what)}</Text> : null}
        </Text>
      ))}
    </Box>
  );
}

export function NotebookScreen({
  state,
  ui,
  lanes,
  flags,
  columns,
  rows,
  color,
  notice,
  quitting = false,
}: NotebookScreenProps) {
  const clean = useClean();
  const cells = state.notebook.cells;
  const marked = ui.marked.map((id) => cells.find((c) => c.id === id)).filter((c) => c !== undefined);
  const body = (): ReactElement => {
    switch (ui.mode) {
      case 'help':
        return <Help color={color} />;
      case 'lanes':
        return (
          <Picker
            title={ui.lanesFor === 'check' ? `check ${state.box.target} for lane` : 'new cell from lane'}
            // a check runs no trainer: the command a new cell would run is not shown for it
            items={
              ui.lanesFor === 'check'
                ? lanes.map(({ name, description }) => ({ name, description }))
                : [...lanes]
            }
            ui={ui}
            color={color}
          />
        );
      case 'flags':
        return (
          <Picker
            title="known flags (or type a new name)"
            items={flagItems(flags, ui.pick.text)}
            ui={ui}
            color={color}
            filtered
          />
        );
      case 'env':
        return <EnvEditor state={state} ui={ui} color={color} height={rows - 5} />;
      case 'value':
        return <ValueEntry state={state} ui={ui} flags={flags} color={color} />;
      case 'compare':
        return marked.length === 2 ? (
          <CompareView a={marked[0]!} b={marked[1]!} width={columns} height={rows - 3} color={color} />
        ) : (
          <Text>mark two cells with m</Text>
        );
      case 'bisect':
        return <BisectView notebook={state.notebook} width={columns} height={rows - 3} color={color} />;
      default:
        return (
          <Box flexDirection="column">
            {state.box.seen ? null : (
              <Text bold color={tone(color, 'info')} wrap="truncate-end">
                {clean(newBoxOffer(state.box.target))}
              </Text>
            )}
            <CellList
              state={state}
              ui={ui}
              color={color}
              height={Math.max(3, rows - (state.box.seen ? 11 : 12) - checkRows(state, ui))}
              width={columns}
            />
            <CellDetail state={state} ui={ui} color={color} />
          </Box>
        );
    }
  };
  const cell = cells[ui.selected];
  const queued = selectedQueued({ cells, queued: state.queued }, ui);
  const prompt = quitting
    ? quittingLine(state)
    : ui.mode === 'confirmDelete' && queued
      ? `take ${queued.qid} ${queued.lane} off the queue? y/N`
      : ui.mode === 'confirmDelete' && cell
        ? `delete ${cell.id} ${cell.lane.name}? y/N (its evidence folder stays)`
        : ui.mode === 'quit'
          ? quitPrompt(state)
          : ui.mode === 'palette'
            ? `:${ui.pick.text}_   (${paletteWords().join(', ')})`
            : null;
  return (
    <Box flexDirection="column" width={columns} height={rows}>
      <Text bold wrap="truncate-end">
        nsa-dbg notebook <Text dimColor>{clean(state.file)}</Text> · {cells.length} cell
        {cells.length === 1 ? '' : 's'}
        {state.running ? <Text color={tone(color, 'warn')}> · {state.running} running</Text> : null}
      </Text>
      <Box flexDirection="column" flexGrow={1}>
        {body()}
      </Box>
      {state.live ? (
        <Text wrap="truncate-end" color={tone(color, /· (SUSPECT|HANG):/.test(state.live) ? 'bad' : 'info')}>
          ▶ {clean(state.live)}
          {state.queued.length ? <Text dimColor> · {state.queued.length} queued</Text> : null}
        </Text>
      ) : null}
      {prompt ? (
        <Text bold color={tone(color, 'warn')} wrap="truncate-end">
          {prompt}
        </Text>
      ) : null}
      <Text wrap="truncate-end" dimColor={!notice}>
        {notice ? clean(notice) : footerHints()}
      </Text>
    </Box>
  );
}
