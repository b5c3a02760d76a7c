/**
 * The newest stack dump: what produced it, the main thread innermost frame first (that is where a
 * hang sits), then the top frame of every other thread.
 */
import { Text } from 'ink';
import { memo, useMemo } from 'react';
import type { Frame } from '../src/ingest/events.js';
import { signalName } from '../src/runs/signals.js';
import type { DumpView } from '../src/session/state.js';
import { useClean } from './display.js';
import { baseName, padCut, positional, shortenPath } from './format.js';
import { type PaneProps, Rows } from './Rows.js';
import { tone } from './theme.js';

export type DumpPaneProps = PaneProps & { dump: DumpView | null };

export const NO_DUMP_TEXT = 'no stack dump yet: d dumps, s samples';

/** Short location: the last 3 path parts, or 2 in a narrow pane, or just the file when even that is too long. */
function where(f: Frame, width: number, room = width): string {
  const full = `${shortenPath(f.file, width < 70 ? 2 : 3)}:${f.line}`;
  return full.length <= room ? full : `${baseName(f.file)}:${f.line}`;
}

function dumpTitle(dump: DumpView): string {
  const cause =
    dump.signal !== undefined
      ? `${dump.kind} ${signalName(dump.signal) ?? `signal ${dump.signal}`}`
      : dump.kind;
  return `stack dump · ${cause} · ${baseName(dump.file)}`;
}

interface FrameRowProps {
  f: Frame;
  fnWidth: number;
  width: number;
  first: boolean;
  /** the innermost frame in the user's code, when the innermost one is a library's */
  user: boolean;
  color: boolean;
}

function FrameRow({ f, fnWidth, width, first, user, color }: FrameRowProps) {
  return (
    <Text wrap="truncate-end">
      <Text bold={first || user} color={first || user ? tone(color, 'warn') : undefined} underline={user}>
        {padCut(f.function, fnWidth)}
      </Text>
      <Text dimColor> {where(f, width, width - fnWidth - 1)}</Text>
    </Text>
  );
}

/** Every name in a dump comes from the box (file names, function and thread names): cleaned once here. */
function cleanDump(dump: DumpView, clean: (s: string) => string): DumpView {
  const frame = (f: Frame): Frame => ({ ...f, file: clean(f.file), function: clean(f.function) });
  return {
    ...dump,
    file: clean(dump.file),
    kind: clean(dump.kind) as DumpView['kind'],
    mainThread: dump.mainThread.map(frame),
    otherThreads: dump.otherThreads.map((t) => ({ name: clean(t.name), top: t.top && frame(t.top) })),
  };
}

function DumpPaneView({ dump: raw, width, height, color }: DumpPaneProps) {
  const clean = useClean();
  const dump = useMemo(() => raw && cleanDump(raw, clean), [raw, clean]);
  if (!dump) {
    return (
      <Rows width={width} height={height}>
        <Text dimColor wrap="truncate-end">
          {NO_DUMP_TEXT}
        </Text>
      </Rows>
    );
  }
  const others = dump.otherThreads;
  // Reserve room for the other threads' header and at least one of them when there are any.
  const otherRows = others.length > 0 ? Math.min(others.length + 1, Math.max(0, height - 4)) : 0;
  const mainRows = Math.max(0, height - 2 - otherRows);
  const main = dump.mainThread.slice(0, mainRows);
  const hiddenMain = dump.mainThread.length - main.length;
  // The function name is what identifies a hang, so it wins the space; the location after it
  // shrinks to a file name, then the row's end-truncation shortens it further.
  const fnWidth = Math.min(Math.max(8, ...main.map((f) => f.function.length)), Math.max(12, width - 12));
  return (
    <Rows width={width} height={height}>
      <Text bold wrap="truncate-end">
        {dumpTitle(dump)}
      </Text>
      <Text dimColor wrap="truncate-end">
        main thread, innermost first{hiddenMain > 0 ? ` (+${hiddenMain} outer frames)` : ''}
      </Text>
      {positional(main).map(({ key, item: f }) => (
        <FrameRow
          key={key}
          f={f}
          fnWidth={fnWidth}
          width={width}
          first={f === main[0]}
          user={dump.userFrame !== undefined && f === dump.mainThread[dump.userFrame]}
          color={color}
        />
      ))}
      {otherRows > 0 ? (
        <Text dimColor wrap="truncate-end">
          other threads
        </Text>
      ) : null}
      {positional(others.slice(0, Math.max(0, otherRows - 1))).map(({ key, item: t }) => (
        <Text key={key} wrap="truncate-end">
          <Text>{t.name}: </Text>
          <Text dimColor>{t.top ? `${t.top.function} ${where(t.top, width)}` : '(no frames)'}</Text>
        </Text>
      ))}
    </Rows>
  );
}

/** skipped by React while the snapshot reuses the same dump */
export const DumpPane = memo(DumpPaneView);
