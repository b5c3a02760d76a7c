/** The quit prompt: says what happens to the run before the user commits. */
import { Text } from 'ink';
import { useClean } from './display.js';
import { positional, wrapPhrases } from './format.js';
import { type PaneProps, Rows } from './Rows.js';
import { tone } from './theme.js';

export type QuitConfirmProps = PaneProps & {
  /** from `controller.quitConsequence()` */
  consequence: string;
  /** the user said yes and the controller is stopping the run */
  busy: boolean;
  /** the same prompt for another yes/no (K: cancel a Slurm job) */
  title?: string;
  yes?: string;
};

export function QuitConfirm({ consequence, busy, title, yes, width, height, color }: QuitConfirmProps) {
  const clean = useClean();
  return (
    <Rows width={width} height={height}>
      <Text bold color={tone(color, 'warn')} wrap="truncate-end">
        {busy ? 'Quitting…' : (title ?? 'Quit nsa-dbg? y/n')}
      </Text>
      {/* Wrapped by hand: every row of a Rows box must be exactly one line. */}
      {positional(wrapPhrases(clean(consequence).split(/\s+/), width, ' ')).map(({ key, item }) => (
        <Text key={key} wrap="truncate-end">
          {item}
        </Text>
      ))}
      {busy ? null : (
        <Text dimColor wrap="truncate-end">
          {yes ?? 'y: quit'} · n or Esc: stay
        </Text>
      )}
    </Rows>
  );
}
