import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { boundForDrawing } from '../../panels/display.js';
import { LogPane, logWindow } from '../../panels/LogPane.js';
import { LOG_LINE_CHARS } from '../../src/session/log-line.js';
import { frameLines } from '../helpers/render.js';
import { logLines } from './sample-state.js';

const pane = (scroll: number, height = 6, width = 100, lines = logLines(40)) =>
  frameLines(
    render(
      <LogPane
        lines={lines}
        total={lines.length}
        scroll={scroll}
        width={width}
        height={height}
        color={false}
      />,
    ).lastFrame(),
  );

describe('LogPane', () => {
  it('shows the newest lines that fit under a title when following', () => {
    const lines = pane(0);
    expect(lines).toHaveLength(6);
    expect(lines[0]).toBe('log · 40 lines · following');
    expect(lines[5]).toContain('step 0039');
    expect(lines[1]).toContain('step 0035');
  });

  it('shows an older window and how many lines are below it when scrolled up', () => {
    const lines = pane(10);
    expect(lines).toHaveLength(6);
    expect(lines[0]).toContain('scrolled');
    expect(lines[4]).toContain('step 0029');
    expect(lines[5]).toBe('— 10 more below —');
  });

  it('stops with the oldest line at the top', () => {
    const lines = pane(1000, 6, 100, logLines(6));
    expect(lines[1]).toBe('[boot] loading config /root/nsa-vibe/configs/lane_batched.yaml');
    expect(lines[5]).toBe('— 2 more below —');
  });

  it('truncates long lines to the pane width instead of wrapping them', () => {
    const long = [{ id: 1, text: `Traceback: ${'x'.repeat(200)}` }];
    const lines = pane(0, 3, 40, long);
    expect(lines).toHaveLength(3);
    expect(lines[1]!.length).toBeLessThanOrEqual(40);
    expect(lines[1]).toMatch(/…$/);
  });

  it('a cut line shows its head and how many bytes it leaves out, whatever the width', () => {
    const cut = [{ id: 1, text: 'A'.repeat(1000), cutBytes: 2_096_152 }];
    for (const width of [40, 100]) {
      const [, row] = pane(0, 3, width, cut);
      expect(row).toMatch(/^A+…\[\+2,096,152 bytes\]$/);
      expect(row!.length).toBeLessThanOrEqual(width);
    }
  });

  it('anything drawn is cut to a row before Ink measures it', () => {
    expect(boundForDrawing('short')).toBe('short');
    const drawn = boundForDrawing(`ValueError: ${'x'.repeat(1 << 20)}`);
    expect(drawn).toHaveLength(LOG_LINE_CHARS + '…[+1,047,588 bytes]'.length);
    expect(drawn.endsWith('…[+1,047,588 bytes]')).toBe(true);
  });

  it('computes the visible window purely', () => {
    expect(logWindow(40, 0, 6)).toEqual({ start: 35, end: 40, below: 0 });
    expect(logWindow(40, 10, 6)).toEqual({ start: 26, end: 30, below: 10 });
    expect(logWindow(3, 0, 6)).toEqual({ start: 0, end: 3, below: 0 });
    expect(logWindow(3, 5, 6)).toEqual({ start: 0, end: 3, below: 0 });
  });
});
