/**
 * The notebook view: cells with verdict badges (stale and marked flags, the diff to the parent),
 * the selected cell's detail, and the overlay of the moment. A pure view of the controller's state
 * and the UI state.
 */
import { Box, Text } from 'ink';
import type { ReactElement } from 'react';
import type { NotebookViewState } from '../../src/notebook/controller.js';
import type { KnownFlag } from '../../src/notebook/flags.js';
import { NOTEBOOK_BINDINGS, paletteWords } from '../../src/notebook/keymap.js';
import { editedEnv, type NotebookUi } from '../../src/notebook/view-reducer.js';
import { useClean } from '../display.js';
import { padCut } from '../format.js';
import { tone } from '../theme.js';
import { BisectView } from './BisectView.js';
import { CompareView } from './CompareView.js';
import { badge, parentDiff, verdictText } from './cell-line.js';
import { filterByName } from './route.js';

export interface NotebookScreenProps {
  state: NotebookViewState;
  ui: NotebookUi;
  /** `command`: what a new cell of the lane runs (shown under the picker) */
  lanes: ReadonlyArray<{ name: string; description: string; command?: { command: string; cwd: string } }>;
  flags: readonly KnownFlag[];
  columns: number;
  rows: number;
  color: boolean;
  notice: string | null;
}

function Help({ color }: { color: boolean }) {
  const labels = NOTEBOOK_BINDINGS.map((b) =>
    [...b.keys, ...(b.palette ? [`:${b.palette === 'lane' ? 'lane NAME' : b.palette}`] : [])].join(' / '),
  );
  const w = Math.max(...labels.map((l) => l.length)) + 2;
  return (
    <Box flexDirection="column">
      <Text bold>keys and : commands · Esc or ? closes</Text>
      {NOTEBOOK_BINDINGS.map((b, i) => (
        <Text key={b.command} wrap="truncate-end">
          <Text bold color={tone(color, 'info')}>
            {padCut(labels[i] ?? '', w)}
          </Text>
          {b.description}
        </Text>
      ))}
    </Box>
  );
}

function Picker({
  title,
  items,
  ui,
  color,
}: {
  title: string;
  items: Array<{ name: string; description: string; command?: { command: string; cwd: string } }>;
  ui: NotebookUi;
  color: boolean;
}) {
  const clean = useClean();
  const matches = filterByName(items, ui.pick.text);
  const command = matches[ui.pick.index]?.command;
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

function EnvEditor({ state, ui, color }: { state: NotebookViewState; ui: NotebookUi; color: boolean }) {
  const clean = useClean();
  const env = ui.env!;
  const cell = state.notebook.cells.find((c) => c.id === env.cellId);
  if (!cell) return null;
  const rows = editedEnv(cell.env, env.edits);
  const changes = Object.entries(env.edits).map(([k, v]) => (v === null ? `-${k}` : `${k}=${v}`));
  return (
    <Box flexDirection="column">
      <Text bold>
        env of {cell.id} {cell.lane.name}{' '}
        <Text dimColor>· space flips 0↔1 · f known flags · u unset · Enter runs a new cell · Esc</Text>
      </Text>
      {rows.map(([k, v], i) => (
        <Text key={k} inverse={i === env.index} wrap="truncate-end">
          {k in env.edits ? <Text color={tone(color, 'warn')}>* </Text> : '  '}
          {k}={clean(v)}
        </Text>
      ))}
      <Text color={tone(color, 'accent')}>
        diff to {cell.id}: {changes.length ? changes.join(' ') : '(none yet)'}
      </Text>
    </Box>
  );
}

function CellList({
  state,
  ui,
  color,
  height,
  width,
}: {
  state: NotebookViewState;
  ui: NotebookUi;
  color: boolean;
  height: number;
  width: number;
}) {
  const clean = useClean();
  const cells = state.notebook.cells;
  if (cells.length === 0)
    return <Text dimColor>no cells yet: n starts one from a lane (:lane NAME), ? lists the keys</Text>;
  const first = Math.max(0, Math.min(ui.selected - Math.floor(height / 2), cells.length - height));
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
    </Box>
  );
}

function Detail({ state, ui }: { state: NotebookViewState; ui: NotebookUi }) {
  const clean = useClean();
  const c = state.notebook.cells[ui.selected];
  if (!c) return null;
  const s = c.summary;
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        {c.id} {c.lane.name} · {c.target} · {c.started ?? c.created}
        {c.git ? ` · ${c.git.sha.slice(0, 10)}${c.git.dirty ? ' dirty' : ''}` : ''}
      </Text>
      {s ? (
        <Text wrap="truncate-end">
          steps {s.stepsReached} · loss {s.firstLoss ?? '–'} → {s.lastLoss ?? '–'} (min {s.minLoss ?? '–'}) ·{' '}
          {s.medianToksPerS ?? '–'} toks/s · peak {s.peakMemMiB ?? '–'} MiB
        </Text>
      ) : null}
      {c.reasons?.length ? <Text wrap="truncate-end">NO-GO: {clean(c.reasons.join('; '))}</Text> : null}
      <Text wrap="truncate-end" dimColor>
        {clean(c.evidenceDir)}
      </Text>
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
}: NotebookScreenProps) {
  const clean = useClean();
  const cells = state.notebook.cells;
  const marked = ui.marked.map((id) => cells.find((c) => c.id === id)).filter((c) => c !== undefined);
  let body: ReactElement;
  switch (ui.mode) {
    case 'help':
      body = <Help color={color} />;
      break;
    case 'lanes':
      body = <Picker title="new cell from lane" items={[...lanes]} ui={ui} color={color} />;
      break;
    case 'flags':
      body = <Picker title="known flags" items={[...flags]} ui={ui} color={color} />;
      break;
    case 'env':
      body = <EnvEditor state={state} ui={ui} color={color} />;
      break;
    case 'compare':
      body =
        marked.length === 2 ? (
          <CompareView a={marked[0]!} b={marked[1]!} width={columns} height={rows - 3} color={color} />
        ) : (
          <Text>mark two cells with m</Text>
        );
      break;
    case 'bisect':
      body = <BisectView notebook={state.notebook} width={columns} height={rows - 3} color={color} />;
      break;
    default:
      body = (
        <Box flexDirection="column">
          <CellList state={state} ui={ui} color={color} height={Math.max(3, rows - 10)} width={columns} />
          <Detail state={state} ui={ui} />
        </Box>
      );
  }
  const cell = cells[ui.selected];
  const prompt =
    ui.mode === 'confirmDelete' && cell
      ? `delete ${cell.id} ${cell.lane.name}? y/N (its evidence folder stays)`
      : ui.mode === 'quit'
        ? `${state.running} is running: stop it (its verdict is kept) and quit? y/N`
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
        {body}
      </Box>
      {prompt ? (
        <Text bold color={tone(color, 'warn')} wrap="truncate-end">
          {prompt}
        </Text>
      ) : null}
      <Text wrap="truncate-end" dimColor={!notice}>
        {notice
          ? clean(notice)
          : 'j/k move · Enter open · n new · r re-run · e env · m mark · c compare · b bisect · x delete · w report · : palette · ? help · q quit'}
      </Text>
    </Box>
  );
}
