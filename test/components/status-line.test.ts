import { describe, expect, it } from 'vitest';
import { computeLayout } from '../../panels/layout.js';
import { MAX_STATUS_ROWS, statusLines } from '../../panels/status-line.js';

const DUMP =
  'the run has ended: no process left to dump (the newest dump is in the pane, all of them in the evidence folder)';

describe('the status line', () => {
  it('wraps a notice at spaces so that its rows read as the notice', () => {
    const rows = statusLines(DUMP, 80);
    expect(rows.length).toBe(2);
    for (const r of rows) expect(r.length).toBeLessThanOrEqual(80);
    expect(rows.join(' ')).toBe(DUMP);
    expect(statusLines(DUMP, 120)).toEqual([DUMP]);
  });

  it('cuts a runaway notice after its last row with …, and splits a word longer than the width', () => {
    const rows = statusLines('x'.repeat(500), 40);
    expect(rows).toHaveLength(MAX_STATUS_ROWS);
    expect(rows[MAX_STATUS_ROWS - 1]).toMatch(/x…$/);
    expect(rows.every((r) => r.length <= 40)).toBe(true);
  });

  it('draws no escape of a notice that quotes a box', () => {
    expect(statusLines('dump failed: \u001b[2J\u001b[31mred', 80).join('')).not.toContain('\u001b');
  });

  it('has nothing to say without a notice', () => {
    expect(statusLines(null, 80)).toEqual([]);
    expect(statusLines('', 80)).toEqual([]);
  });

  it('takes its rows from the body, the frame staying within rows - 1', () => {
    const base = {
      columns: 80,
      rows: 24,
      rankCount: 1,
      stallBanners: [],
      gpuCount: 1,
      processCount: 0,
      hasDump: true,
    };
    const quiet = computeLayout(base);
    const told = computeLayout({ ...base, statusRows: 2 });
    expect(quiet.footerHeight).toBe(1);
    expect(told.footerHeight).toBe(2);
    expect(told.bodyHeight).toBe(quiet.bodyHeight - 1);
    expect(told.frameHeight).toBeLessThanOrEqual(23);
    // a terminal too short for the key hints still shows what a key said
    expect(computeLayout({ ...base, rows: 8, statusRows: 1 }).footerHeight).toBe(1);
  });
});
