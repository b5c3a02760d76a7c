/**
 * The `s` sampling as a table: where the main thread was across N stack samples, one row per
 * function of the innermost user frame (share, count, its lines hottest first), then the hottest
 * full stack, innermost first. A poor man's profiler that
 * needs nothing on the box beyond the trainer's SIGUSR1 handler (or py-spy).
 */
import { Text } from 'ink';
import type { HotFramesView } from '../src/session/state.js';
import { useClean } from './display.js';
import { baseName, padCut, positional } from './format.js';
import { type PaneProps, Rows } from './Rows.js';
import { tone } from './theme.js';

export type HotFramesPaneProps = PaneProps & { hot: HotFramesView };

export function hotFramesTitle(h: HotFramesView): string {
  const progress = h.running ? `sampling ${h.taken}/${h.of}` : `${h.taken} samples`;
  const missed = h.unanswered > 0 ? ` · ${h.unanswered} unanswered (outside Python)` : '';
  return `hot frames · ${progress}, 1.5 s apart${missed}`;
}

/** `selection.py:120` for one line; `selection.py lines 120 (2), 131, 140` for several */
export function hotFrameWhere(r: HotFramesView['rows'][number], clean: (s: string) => string): string {
  const file = clean(baseName(r.file));
  if (r.lines.length <= 1) return `${file}:${r.line}`;
  return `${file} lines ${r.lines.map((l) => (l.count > 1 ? `${l.line} (${l.count})` : String(l.line))).join(', ')}`;
}

export function HotFramesPane({ hot, width, height, color }: HotFramesPaneProps) {
  const clean = useClean();
  const rowsRoom = Math.max(1, Math.min(hot.rows.length, Math.ceil((height - 2) / 2)));
  const rows = hot.rows.slice(0, rowsRoom);
  const stackRoom = Math.max(0, height - 2 - rows.length - 1);
  const stack = hot.hottestStack.slice(0, stackRoom);
  const fnWidth = Math.min(Math.max(8, ...rows.map((r) => r.function.length)), Math.max(12, width - 22));
  return (
    <Rows width={width} height={height}>
      <Text bold wrap="truncate-end">
        {hotFramesTitle(hot)}
      </Text>
      {rows.length === 0 ? (
        <Text dimColor wrap="truncate-end">
          {hot.running
            ? 'waiting for the first samples…'
            : 'no sample came back: the main thread is outside Python'}
        </Text>
      ) : null}
      {positional(rows).map(({ key, item: r }) => (
        <Text key={key} wrap="truncate-end">
          <Text color={r === rows[0] ? tone(color, 'warn') : undefined} bold={r === rows[0]}>
            {`${String(Math.round(r.share * 100)).padStart(3)}% ${String(r.count).padStart(3)}x `}
            {padCut(clean(r.function), fnWidth)}
          </Text>
          <Text dimColor> {hotFrameWhere(r, clean)}</Text>
        </Text>
      ))}
      {stack.length > 0 ? (
        <Text dimColor wrap="truncate-end">
          hottest stack, innermost first
        </Text>
      ) : null}
      {positional(stack).map(({ key, item: f }) => (
        <Text key={key} wrap="truncate-end">
          {`  ${clean(f.function)} `}
          <Text dimColor>{`${clean(baseName(f.file))}:${f.line}`}</Text>
        </Text>
      ))}
    </Rows>
  );
}
