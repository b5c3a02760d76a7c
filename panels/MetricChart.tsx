/**
 * A braille line chart of one metric over steps: the EMA drawn in the accent colour on top of the
 * raw series drawn faint, with the newest raw and EMA values in the title.
 */
import { Text } from 'ink';
import { memo, useMemo } from 'react';
import type { SeriesPoint } from '../src/session/state.js';
import { plotSeriesSegments } from './charts/braille.js';
import { ema, lastFinite } from './charts/ema.js';
import { positional } from './format.js';
import { NarrowLine } from './NarrowLine.js';
import { Rows } from './Rows.js';
import { type Tone, tone } from './theme.js';

export interface MetricChartProps {
  /** e.g. "loss", "toks/s" */
  label: string;
  points: SeriesPoint[];
  /** steps seen in all, when `points` is a decimated view of them */
  total?: number;
  /** total size including the title row */
  width: number;
  height: number;
  color: boolean;
  accent?: Tone;
  /** how the title prints values */
  format?: (v: number) => string;
}

const RAW = 0;

const defaultFormat = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(4));

function MetricChartView({
  label,
  points,
  total,
  width,
  height,
  color,
  accent = 'info',
  format = defaultFormat,
}: MetricChartProps) {
  const smoothed = useMemo(() => ema(points), [points]);
  const plotRows = Math.max(0, height - 1);
  // nothing to plot: no rows at all (an empty braille canvas is a screenful of non-ASCII cells
  // for Ink to measure again every frame of an idle run, and says no more than the title)
  const rows = useMemo(
    () =>
      points.length === 0 ? [] : plotSeriesSegments([{ points }, { points: smoothed }], width, plotRows),
    [points, smoothed, width, plotRows],
  );
  const last = points[points.length - 1];
  const lastEma = lastFinite(smoothed);
  const title =
    last === undefined
      ? `${label} · waiting for steps`
      : `${label} ${Number.isFinite(last.value) ? format(last.value) : String(last.value)} · ema ${
          lastEma ? format(lastEma.value) : '–'
        } · step ${last.step}${
          total !== undefined && total > points.length ? ` · ${points.length} of ${total} points` : ''
        }`;
  return (
    <Rows width={width} height={height}>
      <Text bold wrap="truncate-end">
        {title}
      </Text>
      {positional(rows).map(({ key, item: segments }) => (
        <NarrowLine
          key={key}
          width={width}
          pieces={segments.map((seg) => ({
            text: seg.text,
            dimColor: seg.series === RAW || seg.series < 0,
            color: seg.series > RAW ? tone(color, accent) : undefined,
          }))}
        />
      ))}
    </Rows>
  );
}

/** Memoised: a snapshot that did not touch this series does not re-plot it. */
export const MetricChart = memo(MetricChartView);
