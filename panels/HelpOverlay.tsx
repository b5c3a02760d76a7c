/** The `?` help, generated from the one binding table so it cannot drift from what keys do. */
import { Text } from 'ink';
import type { Binding } from '../src/session/key-binding.js';
import { BINDINGS } from '../src/session/keymap.js';
import { padCut } from './format.js';
import { type PaneProps, Rows } from './Rows.js';
import { tone } from './theme.js';

export type HelpOverlayProps = PaneProps & { bindings?: readonly Binding<string, never>[] };

export function HelpOverlay({ width, height, color, bindings = BINDINGS }: HelpOverlayProps) {
  const labels = bindings.map((b) => b.keys.join(' / '));
  const keyWidth = Math.max(...labels.map((l) => l.length), 3) + 2;
  return (
    <Rows width={width} height={height}>
      <Text bold wrap="truncate-end">
        keys <Text dimColor>· Esc or ? closes</Text>
      </Text>
      {bindings.map((b, i) => (
        <Text key={b.command} wrap="truncate-end">
          <Text bold color={tone(color, 'info')}>
            {padCut(labels[i] ?? '', keyWidth)}
          </Text>
          <Text>{b.description}</Text>
        </Text>
      ))}
    </Rows>
  );
}
