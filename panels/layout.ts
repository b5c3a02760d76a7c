/**
 * Splits the terminal into panel rectangles. Pure arithmetic so it can be tested at any size: the
 * whole live frame is at most `rows - 1` lines, because Ink clears the screen on every frame once
 * the frame reaches the terminal height (flicker, lost scrollback).
 */
import { wrapPhrases } from './format.js';

export interface LayoutInput {
  columns: number;
  rows: number;
  rankCount: number;
  /** the HANG/SUSPECT banner phrases of each stalled rank (their wrapped height is reserved) */
  stallBanners: readonly (readonly string[])[];
  gpuCount: number;
  processCount: number;
  hasDump: boolean;
  /** many ranks: the rows the per-rank table wants (it spans the width, the GPU panel under it) */
  rankTableRows?: number;
  /** the status line's rows while a notice shows (it takes the key hints' place, and more rows when long) */
  statusRows?: number;
}

export interface Layout {
  columns: number;
  /** total height of the live frame: never more than rows - 1 */
  frameHeight: number;
  headerHeight: number;
  /** the key hints, or the status line while a notice shows */
  footerHeight: number;
  /** the area overlays replace (everything between header and footer) */
  bodyHeight: number;
  /** `height` is one chart's (title + plot rows); `totalHeight` is 2 × height when stacked */
  charts: { sideBySide: boolean; leftWidth: number; rightWidth: number; height: number; totalHeight: number };
  status: {
    sideBySide: boolean;
    height: number;
    hbWidth: number;
    hbHeight: number;
    gpuWidth: number;
    gpuHeight: number;
  };
  bottom: {
    sideBySide: boolean;
    height: number;
    logWidth: number;
    logHeight: number;
    dumpWidth: number;
    dumpHeight: number;
  };
}

export const MAX_RANK_ROWS = 8;
const MAX_GPU_ROWS = 8;
const MAX_PROCESS_ROWS = 4;
const MIN_LOG_HEIGHT = 4;
/** below this width the charts and the heartbeat/GPU pair are stacked instead of side by side */
const PAIR_MIN_COLUMNS = 80;
/** below this width the dump pane sits under the log instead of beside it */
const DUMP_BESIDE_MIN_COLUMNS = 100;

/** Half of `columns` for the left pane, with one column of gap before the right one. */
function split(columns: number, leftShare: number): [number, number] {
  const left = Math.max(1, Math.floor((columns - 1) * leftShare));
  return [left, Math.max(1, columns - 1 - left)];
}

function heartbeatNeed(input: LayoutInput, width: number): number {
  const banners = input.stallBanners.reduce((n, b) => n + wrapPhrases(b, width).length, 0);
  const rankRows = Math.max(1, Math.min(input.rankCount, MAX_RANK_ROWS));
  const more = input.rankCount > MAX_RANK_ROWS ? 1 : 0;
  return 1 + banners + rankRows + more;
}

function gpuNeed(input: LayoutInput): number {
  const gpus = Math.max(1, Math.min(input.gpuCount, MAX_GPU_ROWS));
  return 1 + gpus + 1 + Math.min(input.processCount, MAX_PROCESS_ROWS);
}

export function computeLayout(input: LayoutInput): Layout {
  const columns = Math.max(20, input.columns);
  const frameHeight = Math.max(1, input.rows - 1);
  let left = frameHeight;
  const take = (want: number) => {
    const got = Math.max(0, Math.min(want, left));
    left -= got;
    return got;
  };

  const headerHeight = take(2);
  // the key hints' row, or the status line's rows while it says something (whole, however short the
  // terminal: a notice is what the user just asked for)
  const status = input.statusRows ?? 0;
  const footerHeight =
    frameHeight >= 10 ? take(Math.max(1, status)) : take(Math.min(status, frameHeight - 2));
  const bodyHeight = left;

  // Heartbeats first: the HANG banner is the most important thing on screen.
  const table = input.rankTableRows;
  const statusSide = table === undefined && columns >= PAIR_MIN_COLUMNS;
  const [hbWidth, gpuWidth] = statusSide ? split(columns, 0.5) : [columns, columns];
  const statusCap = Math.max(3, Math.floor(frameHeight * (table === undefined ? 0.4 : 0.55)));
  const hb = table ?? heartbeatNeed(input, hbWidth);
  const gpu = gpuNeed(input);
  let hbHeight: number;
  let gpuHeight: number;
  if (statusSide) {
    hbHeight = gpuHeight = take(Math.min(Math.max(hb, gpu), statusCap));
  } else {
    hbHeight = take(Math.min(hb, statusCap));
    gpuHeight = take(Math.min(gpu, Math.max(0, statusCap - hbHeight)));
    if (gpuHeight < 2) {
      left += gpuHeight;
      gpuHeight = 0;
    }
  }

  const dumpBeside = columns >= DUMP_BESIDE_MIN_COLUMNS;
  const bottomMin = MIN_LOG_HEIGHT + (dumpBeside ? 0 : input.hasDump ? 4 : 1);
  const chartsSide = columns >= PAIR_MIN_COLUMNS;
  const targetPlot = Math.min(10, Math.max(3, Math.round(frameHeight * 0.22)));
  const room = left - bottomMin;
  let plotRows = Math.min(targetPlot, chartsSide ? room - 1 : Math.floor(room / 2) - 1);
  if (plotRows < 2) plotRows = 0;
  const chartHeight = plotRows > 0 ? plotRows + 1 : 0;
  const chartsTotal = take(chartsSide ? chartHeight : chartHeight * 2);
  const [chartLeft, chartRight] = chartsSide ? split(columns, 0.5) : [columns, columns];

  const bottomHeight = take(left);
  let logWidth = columns;
  let dumpWidth = columns;
  let logHeight = bottomHeight;
  let dumpHeight = bottomHeight;
  if (dumpBeside) {
    [logWidth, dumpWidth] = split(columns, input.hasDump ? 0.5 : 0.7);
  } else {
    dumpHeight = input.hasDump ? Math.min(12, Math.max(2, Math.floor(bottomHeight * 0.45))) : 1;
    dumpHeight = Math.min(dumpHeight, Math.max(0, bottomHeight - 2));
    logHeight = bottomHeight - dumpHeight;
  }

  return {
    columns,
    frameHeight: frameHeight - left,
    headerHeight,
    footerHeight,
    bodyHeight,
    charts: {
      sideBySide: chartsSide,
      leftWidth: chartLeft,
      rightWidth: chartRight,
      height: chartsTotal > 0 ? chartHeight : 0,
      totalHeight: chartsTotal,
    },
    status: {
      sideBySide: statusSide,
      height: statusSide ? hbHeight : hbHeight + gpuHeight,
      hbWidth,
      hbHeight,
      gpuWidth,
      gpuHeight,
    },
    bottom: { sideBySide: dumpBeside, height: bottomHeight, logWidth, logHeight, dumpWidth, dumpHeight },
  };
}

/** Lines of log text visible in a log pane of `height` (title row, and the "more below" row when scrolled). */
export function logTextRows(height: number, scrolled: boolean): number {
  return Math.max(0, height - 1 - (scrolled ? 1 : 0));
}

/** The furthest the log can be scrolled up so that its oldest kept line reaches the top. */
export function maxLogScroll(lineCount: number, logHeight: number): number {
  return Math.max(0, lineCount - logTextRows(logHeight, true));
}
