import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { HotFramesPane } from '../../panels/HotFramesPane.js';
import type { HotFramesView } from '../../src/session/state.js';
import { frameLines } from '../helpers/render.js';

const SEL = { file: 'nsa/core/selection.py', line: 88, function: 'select_topn_ranges' };
const FLASH = { file: 'nsa/core/flash_wrappers.py', line: 31, function: 'is_flash_available' };
const HOT: HotFramesView = {
  running: false,
  taken: 10,
  of: 10,
  unanswered: 0,
  rows: [
    {
      ...SEL,
      count: 7,
      share: 0.7,
      lines: [
        { line: 88, count: 4 },
        { line: 91, count: 2 },
        { line: 97, count: 1 },
      ],
    },
    { ...FLASH, count: 3, share: 0.3, lines: [{ line: 31, count: 3 }] },
  ],
  hottestStack: [
    SEL,
    { file: 'nsa/core/nsa_attention.py', line: 140, function: '_forward_prefill_sequential' },
  ],
};

const pane = (hot: HotFramesView, width = 60, height = 8) =>
  frameLines(render(<HotFramesPane hot={hot} width={width} height={height} color={false} />).lastFrame());

describe('HotFramesPane', () => {
  it('shows the hottest frames with share and count, then the hottest stack innermost first', () => {
    const lines = pane(HOT, 80);
    expect(lines[0]).toBe('hot frames · 10 samples, 1.5 s apart');
    // one row per function, its lines as the detail (hottest first)
    expect(lines[1]).toMatch(/^ 70% +7x select_topn_ranges +selection\.py lines 88 \(4\), 91 \(2\), 97$/);
    expect(lines[2]).toMatch(/^ 30% +3x is_flash_available +flash_wrappers\.py:31/);
    expect(lines[3]).toBe('hottest stack, innermost first');
    expect(lines[4]).toContain('select_topn_ranges');
    expect(lines[5]).toContain('_forward_prefill_sequential');
  });

  it('shows progress while sampling, and says when no sample came back', () => {
    expect(pane({ ...HOT, running: true, taken: 3, rows: [], hottestStack: [] })[0]).toContain(
      'sampling 3/10',
    );
    const none = pane({ ...HOT, unanswered: 10, rows: [], hottestStack: [] }, 90);
    expect(none[0]).toContain('10 unanswered (outside Python)');
    expect(none[1]).toContain('no sample came back');
  });
});
