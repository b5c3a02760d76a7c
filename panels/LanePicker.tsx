/**
 * Lane picker overlay: type to filter, ↑/↓ to move, Enter to choose, then a y/n confirm because
 * choosing stops the current run. Keys are handled by the App's one input router; this only draws.
 */
import { Text } from 'ink';
import type { LaneSummary } from '../src/session/state.js';
import { filterLanes } from '../src/session/ui-reducer.js';
import { useClean } from './display.js';
import { padCut } from './format.js';
import { type PaneProps, Rows } from './Rows.js';
import { tone } from './theme.js';

export type LanePickerProps = PaneProps & {
  lanes: readonly LaneSummary[];
  filter: string;
  index: number;
  /** set in the confirm step: the lane about to be started */
  confirming?: string;
  currentLane: string;
};

/** Lane files can come from a project checkout: names, descriptions and env are cleaned like remote text. */
function envText(env: Record<string, string>, clean: (s: string) => string): string {
  const pairs = Object.entries(env).map(([k, v]) => clean(`${k}=${v}`));
  return pairs.length > 0 ? pairs.join(' ') : '(no extra env)';
}

/** Scroll the list so the selected row is always inside the `rows` shown. */
function listWindow(count: number, index: number, rows: number): [number, number] {
  const start = Math.min(Math.max(0, index - rows + 1), Math.max(0, count - rows));
  return [start, Math.min(count, start + rows)];
}

function ConfirmStep({ lane, p }: { lane: LaneSummary | undefined; p: LanePickerProps }) {
  const clean = useClean();
  const name = clean(p.confirming ?? '');
  return (
    <Rows width={p.width} height={p.height}>
      <Text bold color={tone(p.color, 'warn')} wrap="truncate-end">
        Stop the current run and start lane {name}? y/n
      </Text>
      <Text wrap="truncate-end">
        current lane {clean(p.currentLane) || '–'} → {name}
      </Text>
      {lane ? <Text wrap="truncate-end">{clean(lane.description)}</Text> : null}
      {lane ? (
        <Text dimColor wrap="truncate-end">
          env: {envText(lane.env, clean)}
        </Text>
      ) : null}
      <Text dimColor wrap="truncate-end">
        y: stop and start · n: back to the list · Esc: cancel
      </Text>
    </Rows>
  );
}

export function LanePicker(p: LanePickerProps) {
  const clean = useClean();
  if (p.confirming !== undefined) {
    return <ConfirmStep lane={p.lanes.find((l) => l.name === p.confirming)} p={p} />;
  }
  const matches = filterLanes(p.lanes, p.filter);
  const selected = matches[p.index];
  const listRows = Math.max(1, p.height - 4);
  const [start, end] = listWindow(matches.length, p.index, listRows);
  const nameWidth = Math.min(24, Math.max(8, ...matches.map((l) => clean(l.name).length)));
  return (
    <Rows width={p.width} height={p.height}>
      <Text bold wrap="truncate-end">
        switch lane <Text dimColor>· type to filter · ↑/↓ move · Enter choose · Esc cancel</Text>
      </Text>
      <Text wrap="truncate-end">
        filter: <Text color={tone(p.color, 'info')}>{clean(p.filter)}</Text>
        <Text inverse> </Text>
        <Text dimColor>
          {'  '}
          {matches.length}/{p.lanes.length} lanes
        </Text>
      </Text>
      {matches.length === 0 ? <Text dimColor>no lane matches "{clean(p.filter)}"</Text> : null}
      {matches.slice(start, end).map((l, i) => {
        const isSelected = start + i === p.index;
        return (
          <Text key={l.name} wrap="truncate-end" inverse={isSelected}>
            <Text bold={isSelected} color={isSelected ? undefined : tone(p.color, 'accent')}>
              {isSelected ? '› ' : '  '}
              {padCut(clean(l.name), nameWidth)}
            </Text>
            <Text>
              {' '}
              {clean(l.description)}
              {l.name === p.currentLane ? ' (current)' : ''}
            </Text>
          </Text>
        );
      })}
      {selected ? (
        <Text dimColor wrap="truncate-end">
          env: {envText(selected.env, clean)}
        </Text>
      ) : null}
    </Rows>
  );
}
