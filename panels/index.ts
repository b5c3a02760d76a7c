/** The Ink views. The engine never imports from here; the CLI renders `App` with a controller. */
export { App, type AppProps } from './App.js';
export { Dashboard, type DashboardProps, dashboardLayout } from './Dashboard.js';
export { DumpPane, type DumpPaneProps } from './DumpPane.js';
export { GpuPanel, type GpuPanelProps } from './GpuPanel.js';
export { DEMO_MARKER, Header, type HeaderProps } from './Header.js';
export { HeartbeatPanel, type HeartbeatPanelProps, stallPhrases } from './HeartbeatPanel.js';
export { HelpOverlay, type HelpOverlayProps } from './HelpOverlay.js';
export { LanePicker, type LanePickerProps } from './LanePicker.js';
export { LogPane, type LogPaneProps } from './LogPane.js';
export { computeLayout, type Layout } from './layout.js';
export { MetricChart, type MetricChartProps } from './MetricChart.js';
export { QuitConfirm, type QuitConfirmProps } from './QuitConfirm.js';
export { colorFromEnv } from './theme.js';
export { type TerminalSize, useTerminalSize } from './use-terminal-size.js';
