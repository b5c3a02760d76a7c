import { describe, expect, it } from 'vitest';
import { App } from '../../panels/App.js';
import { Dashboard } from '../../panels/Dashboard.js';
import { computeLayout, type LayoutInput } from '../../panels/layout.js';
import type { DashboardState } from '../../src/session/state.js';
import { initialUiState, type UiState } from '../../src/session/ui-reducer.js';
import { DEFAULT_LANES, FakeController } from '../helpers/fake-controller.js';
import { renderAt, settle, waitFor } from '../helpers/render.js';
import { logLines, rank0, runningState, STALLED } from './sample-state.js';

const SIZES = [
  [80, 24],
  [120, 40],
  [100, 30],
  [60, 20],
  [200, 60],
  [80, 12],
  [40, 8],
] as const;

const base: Omit<LayoutInput, 'columns' | 'rows'> = {
  rankCount: 1,
  stallBanners: [],
  gpuCount: 1,
  processCount: 1,
  hasDump: false,
};

/** A heavy state: 8 ranks (one stalled), 8 GPUs with processes, a dump, a long log. */
function crowded(): DashboardState {
  const s = runningState({
    ranks: [STALLED, ...Array.from({ length: 7 }, (_, i) => rank0({ rank: i + 1 }))],
  });
  const gpu0 = s.gpu.gpus[0]!;
  return {
    ...s,
    gpu: {
      ...s.gpu,
      gpus: Array.from({ length: 8 }, (_, i) => ({ ...gpu0, index: i })),
      processes: Array.from({ length: 8 }, (_, i) => ({ pid: 4162 + i, name: 'python3', usedMiB: 1772 })),
    },
    log: { lines: logLines(500), total: 500 },
  };
}

describe('computeLayout', () => {
  it('never uses more than rows - 1 lines, whatever the data', () => {
    for (const [columns, rows] of SIZES) {
      for (const extra of [
        {},
        { rankCount: 8, gpuCount: 8, processCount: 8, hasDump: true },
        { stallBanners: [['HANG rank 0', 'step 6', 'in-step', '14s silent', 'CPU busy']] },
      ]) {
        const l = computeLayout({ ...base, ...extra, columns, rows });
        expect(l.frameHeight, `${columns}x${rows}`).toBeLessThanOrEqual(rows - 1);
        const sum =
          l.headerHeight + l.footerHeight + l.charts.totalHeight + l.status.height + l.bottom.height;
        expect(sum).toBe(l.frameHeight);
        expect(l.bodyHeight).toBe(l.frameHeight - l.headerHeight - l.footerHeight);
      }
    }
  });

  it('puts the charts side by side at 80 columns and up, and the dump beside the log from 100', () => {
    const narrow = computeLayout({ ...base, columns: 80, rows: 24, hasDump: true });
    expect(narrow.charts.sideBySide).toBe(true);
    expect(narrow.bottom.sideBySide).toBe(false);
    expect(narrow.charts.height).toBeGreaterThanOrEqual(3);
    expect(narrow.bottom.logHeight).toBeGreaterThanOrEqual(4);
    const wide = computeLayout({ ...base, columns: 120, rows: 40, hasDump: true });
    expect(wide.bottom.sideBySide).toBe(true);
    expect(wide.bottom.logWidth + 1 + wide.bottom.dumpWidth).toBe(120);
    const tiny = computeLayout({ ...base, columns: 60, rows: 20 });
    expect(tiny.charts.sideBySide).toBe(false);
  });

  it('reserves two lines for a HANG banner that does not fit a half-width pane', () => {
    const banner = ['HANG rank 0', 'step 6', 'in-step', '14s silent', 'CPU busy'];
    const one = computeLayout({ ...base, columns: 160, rows: 40, stallBanners: [banner] });
    const two = computeLayout({ ...base, columns: 80, rows: 24, stallBanners: [banner] });
    expect(one.status.hbHeight).toBeGreaterThanOrEqual(3);
    expect(two.status.hbHeight).toBeGreaterThanOrEqual(4);
  });
});

describe('Dashboard frame height', () => {
  const overlays: UiState['overlay'][] = ['none', 'help', 'lanes', 'confirmLane', 'quit'];
  for (const [columns, rows] of [
    [80, 24],
    [120, 40],
  ] as const) {
    it(`stays within ${rows - 1} lines at ${columns}x${rows}, with every overlay`, async () => {
      for (const overlay of overlays) {
        const ui: UiState = { ...initialUiState, overlay, picker: { filter: '', index: 0, chosen: 'fp32' } };
        const r = renderAt(
          <Dashboard
            state={crowded()}
            ui={ui}
            columns={columns}
            rows={rows}
            color={false}
            lanes={DEFAULT_LANES}
            quitConsequence="The local run (pid 4162) will be stopped."
          />,
          columns,
          rows,
        );
        await settle(1);
        const lines = r.lines();
        expect(lines.length, overlay).toBeLessThanOrEqual(rows - 1);
        expect(lines.length, overlay).toBeGreaterThanOrEqual(rows - 3);
        for (const l of lines) expect(l.length, `${overlay}: ${l}`).toBeLessThanOrEqual(columns);
        r.unmount();
      }
    });
  }
});

describe('App at a real terminal size', () => {
  it('keeps the HANG banner, both charts, GPU and log usable at 80x24', async () => {
    const ctl = new FakeController(crowded());
    const r = renderAt(<App controller={ctl} onExit={() => {}} color={false} />, 80, 24);
    await waitFor(() => r.lastFrame().includes('HANG rank'));
    const text = r.lines().join('\n');
    expect(r.lines().length).toBeLessThanOrEqual(23);
    for (const needle of [
      'HANG rank 0 · step 6 · in-step',
      'loss 5.7019',
      'toks/s 72 ·',
      'GPU',
      'log · 500 lines',
      'step 0499',
    ]) {
      expect(text).toContain(needle);
    }
    r.unmount();
  });

  it('re-lays out on resize and stays under the height at both sizes', async () => {
    const ctl = new FakeController(crowded());
    const r = renderAt(<App controller={ctl} onExit={() => {}} color={false} />, 120, 40);
    await waitFor(
      () => r.lines().length > 30,
      () => `${r.lines().length} lines`,
    );
    expect(r.lines().length).toBeLessThanOrEqual(39);
    r.resize(80, 24);
    await waitFor(
      () => r.lines().length <= 23,
      () => `${r.lines().length} lines after resize`,
    );
    expect(Math.max(...r.lines().map((l) => l.length))).toBeLessThanOrEqual(80);
    r.unmount();
  });
});
