/**
 * The whole screen: header, then either the panels or the open overlay, then a key hint line.
 * Heights come from `computeLayout`, and every section is a fixed-height clipped box, so the frame
 * never grows past `rows - 1` whatever the data does.
 */
import { Box, Text } from 'ink';
import type { PropsWithChildren } from 'react';
import { BINDINGS, type Command } from '../src/session/keymap.js';
import type { DashboardState, LaneSummary } from '../src/session/state.js';
import type { UiState } from '../src/session/ui-reducer.js';
import { rateText } from '../src/util/rate.js';
import { DumpPane } from './DumpPane.js';
import { GpuPanel } from './GpuPanel.js';
import { Header } from './Header.js';
import { HeartbeatPanel, stallPhrases } from './HeartbeatPanel.js';
import { HelpOverlay } from './HelpOverlay.js';
import { HotFramesPane } from './HotFramesPane.js';
import { LanePicker } from './LanePicker.js';
import { LogPane } from './LogPane.js';
import { computeLayout, type Layout, MAX_RANK_ROWS } from './layout.js';
import { MetricChart } from './MetricChart.js';
import { QuitConfirm } from './QuitConfirm.js';
import { RankTable } from './RankTable.js';
import { rankTableNeed } from './rank-table-text.js';
import { statusLines } from './status-line.js';
import { tone } from './theme.js';

export interface DashboardProps {
  state: DashboardState;
  ui: UiState;
  columns: number;
  rows: number;
  color: boolean;
  /** the App's own transient notice (dump outcome, lane switch), shown over the engine's on the status line */
  notice?: string | null;
  lanes: readonly LaneSummary[];
  quitConsequence: string;
  /** `K`'s prompt: what cancelling the run's launch does (a Slurm run: scancel of its job) */
  cancelJobText?: string | null;
  quitting?: boolean;
  /** false in a notebook cell's dashboard: `q` goes back, and the footer says so */
  quitAsks?: boolean;
}

export function dashboardLayout(
  state: DashboardState,
  columns: number,
  rows: number,
  status: readonly string[] = [],
): Layout {
  return computeLayout({
    columns,
    rows,
    statusRows: status.length,
    rankCount: state.ranks.length,
    stallBanners: state.ranks.filter((r) => r.stall).map(stallPhrases),
    gpuCount: state.gpu.gpus.length,
    processCount: state.gpu.processes.length,
    hasDump: state.dump !== null || state.hotFrames !== null,
    ...(state.many ? { rankTableRows: rankTableNeed(state.many, state.ranks, MAX_RANK_ROWS) } : {}),
  });
}

const formatLoss = (v: number) => v.toFixed(4);

function keyOf(command: Command): string {
  return BINDINGS.find((b) => b.command === command)?.keys[0] ?? '';
}

/** The hint line: the binding table's keys with a footer name, in its order */
export function footerHints(quitAsks = true): string {
  const hints = BINDINGS.filter((b) => b.hint).map(
    (b) => `${b.keys[0]} ${b.command === 'quit' && !quitAsks ? 'back' : b.hint}`,
  );
  hints.push(`${keyOf('scrollUp')}${keyOf('scrollDown')} scroll`);
  return hints.join('  ');
}

/** the bottom rows: what a key or the engine said, on rows of its own, else the key hints */
function Footer({
  quitAsks,
  status,
  color,
}: {
  quitAsks: boolean;
  status: readonly string[];
  color: boolean;
}) {
  if (status.length === 0)
    return (
      <Text dimColor wrap="truncate-end">
        {footerHints(quitAsks)}
      </Text>
    );
  return (
    <Box flexDirection="column" flexShrink={0}>
      {status.map((line, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows of one wrapped text, by position
        <Text key={i} color={tone(color, 'info')} wrap="truncate-end">
          {line}
        </Text>
      ))}
    </Box>
  );
}

/** two panes side by side (a column gap between them), or one above the other */
function Pair({ sideBySide, height, children }: PropsWithChildren<{ sideBySide: boolean; height: number }>) {
  const gap = sideBySide ? 1 : 0;
  return (
    <Box flexDirection={sideBySide ? 'row' : 'column'} height={height} flexShrink={0} gap={gap}>
      {children}
    </Box>
  );
}

function Panels({
  state,
  ui,
  color,
  layout,
}: {
  state: DashboardState;
  ui: UiState;
  color: boolean;
  layout: Layout;
}) {
  const { charts, status, bottom } = layout;
  return (
    <>
      {charts.totalHeight > 0 ? (
        <Pair sideBySide={charts.sideBySide} height={charts.totalHeight}>
          <MetricChart
            label="loss"
            points={state.loss}
            total={state.lossTotal}
            width={charts.leftWidth}
            height={charts.height}
            color={color}
            accent="accent"
            format={formatLoss}
          />
          <MetricChart
            label={state.rateLabel ?? 'toks/s'}
            points={state.toks}
            total={state.toksTotal}
            width={charts.rightWidth}
            height={charts.height}
            color={color}
            accent="info"
            format={rateText}
          />
        </Pair>
      ) : null}
      <Pair sideBySide={status.sideBySide} height={status.height}>
        {state.many ? (
          <RankTable
            many={state.many}
            ranks={state.ranks}
            width={status.hbWidth}
            height={status.hbHeight}
            color={color}
          />
        ) : (
          <HeartbeatPanel ranks={state.ranks} width={status.hbWidth} height={status.hbHeight} color={color} />
        )}
        {status.gpuHeight > 0 ? (
          <GpuPanel gpu={state.gpu} width={status.gpuWidth} height={status.gpuHeight} color={color} />
        ) : null}
      </Pair>
      <Pair sideBySide={bottom.sideBySide} height={bottom.height}>
        <LogPane
          lines={state.log.lines}
          total={state.log.total}
          scroll={ui.logScroll}
          width={bottom.logWidth}
          height={bottom.logHeight}
          color={color}
        />
        {bottom.dumpHeight > 0 && state.hotFrames ? (
          <HotFramesPane
            hot={state.hotFrames}
            width={bottom.dumpWidth}
            height={bottom.dumpHeight}
            color={color}
          />
        ) : bottom.dumpHeight > 0 ? (
          <DumpPane dump={state.dump} width={bottom.dumpWidth} height={bottom.dumpHeight} color={color} />
        ) : null}
      </Pair>
    </>
  );
}

function Overlay(p: DashboardProps & { layout: Layout }) {
  const size = { width: p.layout.columns, height: p.layout.bodyHeight, color: p.color };
  switch (p.ui.overlay) {
    case 'help':
      return <HelpOverlay {...size} />;
    case 'quit':
      return <QuitConfirm {...size} consequence={p.quitConsequence} busy={p.quitting ?? false} />;
    case 'cancelJob':
      return (
        <QuitConfirm
          {...size}
          title="Cancel the job? y/n"
          consequence={p.cancelJobText ?? 'This run has no job to cancel (K cancels a Slurm job).'}
          busy={false}
          yes="y: cancel it"
        />
      );
    case 'lanes':
    case 'confirmLane':
      return (
        <LanePicker
          {...size}
          lanes={p.lanes}
          filter={p.ui.picker.filter}
          index={p.ui.picker.index}
          confirming={p.ui.overlay === 'confirmLane' ? p.ui.picker.chosen : undefined}
          currentLane={p.state.lane}
        />
      );
    case 'none':
      return null;
  }
}

export function Dashboard(p: DashboardProps) {
  const { state, color } = p;
  const status = statusLines(p.notice ?? state.notice, Math.max(20, p.columns));
  const layout = dashboardLayout(state, p.columns, p.rows, status);
  return (
    <Box flexDirection="column" width={layout.columns} height={layout.frameHeight} overflow="hidden">
      <Header {...state} width={layout.columns} color={color} />
      {p.ui.overlay === 'none' ? (
        <Panels state={state} ui={p.ui} color={color} layout={layout} />
      ) : (
        <Box height={layout.bodyHeight} flexShrink={0} overflow="hidden">
          <Overlay {...p} layout={layout} />
        </Box>
      )}
      {layout.footerHeight > 0 ? (
        <Footer quitAsks={p.quitAsks ?? true} status={status.slice(0, layout.footerHeight)} color={color} />
      ) : null}
    </Box>
  );
}
