/**
 * The tail of the trainer's output. Ink cannot scroll, so this renders only the window of lines that
 * fits, `scroll` lines up from the newest, and says how many are hidden below.
 */

import { Text } from 'ink';
import { memo } from 'react';
import { cutMark } from '../src/session/log-line.js';
import type { LogLine } from '../src/session/state.js';
import { useClean } from './display.js';
import { logTextRows, maxLogScroll } from './layout.js';
import { type PaneProps, Rows } from './Rows.js';
import { tone } from './theme.js';

export type LogPaneProps = PaneProps & {
  lines: LogLine[];
  /** lines since the run started (more than `lines.length` once old ones were dropped) */
  total: number;
  /** lines scrolled up from the newest (0 = following) */
  scroll: number;
};

/** Which slice of `count` lines is visible: [start, end) plus how many lie below `end`. */
export function logWindow(count: number, scroll: number, height: number) {
  // Clamp here too: a stale scroll offset (the log was trimmed) must still show a full window.
  const below = Math.min(Math.max(0, scroll), maxLogScroll(count, height));
  const rows = logTextRows(height, below > 0);
  const end = count - below;
  const start = Math.max(0, end - rows);
  return { start, end, below };
}

/** Tags worth a colour (on the cleaned text). */
function lineTone(text: string) {
  if (/FATAL|Traceback|Error:|error:|non-finite/i.test(text)) return 'bad' as const;
  if (/Warning|\[warn/i.test(text)) return 'warn' as const;
  return null;
}

function LogPaneView({ lines, total, scroll, width, height, color }: LogPaneProps) {
  const { start, end, below } = logWindow(lines.length, scroll, height);
  const visible = lines.slice(start, end);
  const clean = useClean();
  return (
    <Rows width={width} height={height}>
      <Text bold wrap="truncate-end">
        log{' '}
        <Text dimColor>
          · {total} lines · {below > 0 ? `scrolled (G follows)` : 'following'}
        </Text>
      </Text>
      {visible.map((l) => {
        let text = clean(l.text);
        const t = lineTone(text);
        // a cut line keeps its mark in view: the head gives way to it (counted in characters; a
        // line of wide characters may still lose the mark's end to the row's own truncation)
        if (l.cutBytes !== undefined) {
          const mark = cutMark(l.cutBytes);
          text = `${text.slice(0, Math.max(0, width - mark.length))}${mark}`;
        }
        return (
          <Text key={l.id} wrap="truncate-end" color={t ? tone(color, t) : undefined}>
            {text === '' ? ' ' : text}
          </Text>
        );
      })}
      {below > 0 ? (
        <Text dimColor wrap="truncate-end">
          — {below} more below —
        </Text>
      ) : null}
    </Rows>
  );
}

/** skipped by React while the snapshot reuses the same lines (an idle run's clock frames) */
export const LogPane = memo(LogPaneView);
