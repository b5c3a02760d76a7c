/**
 * The env editor (`e`) and its value entry (`=`, or a flag picked whose values are not 0/1): the
 * cell's env with the edits applied, each edit said as "NAME old → new", and for the value entry the
 * typed text plus the values the lanes and the trainer's flag table know. Pure views.
 */
import { Box, Text } from 'ink';
import { type KnownFlag, valueChoices } from '../../src/notebook/flags.js';
import { envHints } from '../../src/notebook/keymap.js';
import { editedEnv, envChanges } from '../../src/notebook/view-reducer.js';
import { useClean } from '../display.js';
import { padCut } from '../format.js';
import { tone } from '../theme.js';
import type { ScreenPart } from './NotebookScreen.js';

export function EnvEditor({ state, ui, color, height }: ScreenPart & { height: number }) {
  const clean = useClean();
  const env = ui.env!;
  const cell = state.notebook.cells.find((c) => c.id === env.cellId);
  if (!cell) return null;
  const rows = editedEnv(cell.env, env.edits);
  const changes = envChanges(cell.env, env.edits);
  const room = Math.max(3, height - 3);
  const first = Math.max(0, Math.min(env.index - Math.floor(room / 2), rows.length - room));
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        env of {cell.id} {cell.lane.name} <Text dimColor>· {envHints()}</Text>
      </Text>
      {rows.slice(first, first + room).map(([k, v], i) => (
        <Text key={k} inverse={first + i === env.index} wrap="truncate-end">
          {k in env.edits ? <Text color={tone(color, 'warn')}>* </Text> : '  '}
          {k}={clean(v)}
        </Text>
      ))}
      <Text color={tone(color, 'accent')} wrap="truncate-end">
        changes vs {cell.id}: {changes.length ? clean(changes.join(' · ')) : '(none yet)'}
      </Text>
    </Box>
  );
}

export function ValueEntry({ state, ui, flags, color }: ScreenPart & { flags: readonly KnownFlag[] }) {
  const clean = useClean();
  const name = ui.env?.editing ?? '';
  const cell = state.notebook.cells.find((c) => c.id === ui.env?.cellId);
  const edits = ui.env?.edits ?? {};
  const now = name in edits ? edits[name] : cell?.env[name];
  const flag = flags.find((f) => f.name === name);
  const choices = valueChoices(flags, name, ui.pick.text);
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        {name} = {clean(ui.pick.text)}_{' '}
        <Text dimColor>· type a value or pick one, ↑/↓ Enter sets it · Esc back</Text>
      </Text>
      <Text dimColor wrap="truncate-end">
        now: {now == null ? 'unset' : clean(now)}
        {flag?.description ? ` · ${clean(flag.description)}` : ''}
      </Text>
      {choices.slice(0, 12).map((v, i) => {
        const lanes = flag?.lanes.filter((l) => l.value === v).map((l) => l.lane) ?? [];
        const typed = i === 0 && v === ui.pick.text && !flag?.values.includes(v);
        return (
          <Text key={v} inverse={i === ui.pick.index} wrap="truncate-end">
            <Text bold color={tone(color, 'info')}>
              {padCut(clean(v), 28)}
            </Text>
            <Text dimColor>
              {typed ? 'as typed' : lanes.length ? `set by ${lanes.join(', ')}` : 'a value the trainer takes'}
            </Text>
          </Text>
        );
      })}
      {choices.length === 0 ? <Text dimColor>no known values: type one</Text> : null}
    </Box>
  );
}
