/**
 * The faster Output.get() (panels/ink-fast-output.ts) must draw exactly what Ink's own does: the
 * same frames, cell for cell (character and style), for the dashboard in its states, ASCII mode,
 * overlays, hostile remote text and a wide-character log line (which it hands back to Ink). Each
 * state is rendered with Ink's get(), then again after the patch is installed.
 */
import { Box, Text } from 'ink';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { App } from '../../panels/App.js';
import { Dashboard } from '../../panels/Dashboard.js';
import { DisplayMode } from '../../panels/display.js';
import { parseLine } from '../../panels/frame-cells.js';
import { installFastOutput } from '../../panels/ink-fast-output.js';
import type { DashboardState } from '../../src/session/state.js';
import { initialUiState, type UiState } from '../../src/session/ui-reducer.js';
import { DEFAULT_LANES, FakeController } from '../helpers/fake-controller.js';
import { renderAt, settle, stripAnsi } from '../helpers/render.js';
import { DUMP, logLines, runningState, STALLED } from './sample-state.js';

interface Case {
  name: string;
  state: DashboardState;
  ui?: UiState;
  ascii?: boolean;
  size: [number, number];
}

// colours on, as in a terminal (chalk reads this when Ink first loads it)
vi.hoisted(() => {
  process.env.FORCE_COLOR = '3';
});

const many = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ step: i + 1, value: 5.7 + Math.sin(i / 9) * 0.05 }));

const CASES: Case[] = [
  { name: 'running', state: runningState(), size: [120, 40] },
  { name: 'narrow', state: runningState(), size: [80, 24] },
  { name: 'tiny (clipped boxes)', state: runningState({ ranks: [STALLED], dump: DUMP }), size: [44, 14] },
  { name: 'tiny ascii', state: runningState({ dump: DUMP }), ascii: true, size: [50, 16] },
  { name: 'stalled with a dump', state: runningState({ ranks: [STALLED], dump: DUMP }), size: [120, 40] },
  {
    name: 'eight ranks, long series, long log',
    state: runningState({
      ranks: Array.from({ length: 8 }, (_, r) => ({ ...STALLED, rank: r, stall: null })),
      loss: many(3000),
      toks: many(3000),
      log: { lines: logLines(400), total: 400 },
    }),
    size: [120, 40],
  },
  { name: 'ascii', state: runningState({ dump: DUMP }), ascii: true, size: [120, 40] },
  {
    name: 'help overlay',
    state: runningState(),
    ui: { ...initialUiState, overlay: 'help' },
    size: [120, 40],
  },
  {
    name: 'hostile and wide text',
    state: runningState({
      log: {
        lines: [
          { id: 1, text: '\u001b]0;x\u0007 tab\there é ü' },
          { id: 2, text: '日本語のログ 🚀 emoji' },
        ],
        total: 2,
      },
      notice: '\u001b[2J cleared?',
    }),
    size: [120, 40],
  },
];

function draw(c: Case): string {
  const r = renderAt(
    <DisplayMode ascii={c.ascii ?? false}>
      <Dashboard
        state={c.state}
        ui={c.ui ?? initialUiState}
        columns={c.size[0]}
        rows={c.size[1]}
        color
        lanes={DEFAULT_LANES}
        quitConsequence=""
      />
    </DisplayMode>,
    c.size[0],
    c.size[1],
  );
  const frame = r.lastFrame();
  r.unmount();
  return frame;
}

/** cells per line, trailing plain blanks dropped (Ink trims them too, not always the same way) */
function cellsOf(frame: string) {
  return frame.split('\n').map((l) => {
    const c = parseLine(l);
    let end = c.chars.length;
    while (end > 0 && c.chars[end - 1] === ' ' && c.styles[end - 1] === '') end--;
    return c.complex ? { raw: l } : { chars: c.chars.slice(0, end).join(''), styles: c.styles.slice(0, end) };
  });
}

const CLIPPED = (
  <Box flexDirection="column">
    <Box width={12} height={2} overflow="hidden" flexDirection="column">
      <Box width={40} flexShrink={0} marginLeft={-3}>
        <Text color="red">
          0123456789<Text inverse>abcdefghij</Text>klmnopqrstuvwxyz
        </Text>
      </Box>
      <Text>third, below the clip</Text>
    </Box>
    <Text>after ⠿⡇ done</Text>
  </Box>
);

function drawClipped(): string {
  const r = renderAt(CLIPPED, 30, 6);
  const f = r.lastFrame();
  r.unmount();
  return f;
}

describe('the faster Output.get()', () => {
  // every frame with Ink's own get() first: the patch, once installed, stays for this file
  let inks: string[] = [];
  let inkClipped = '';
  beforeAll(async () => {
    inks = CASES.map(draw);
    inkClipped = drawClipped();
    expect(await installFastOutput()).toBe(true);
  });

  it('draws every case cell for cell as Ink does', () => {
    expect(inks.join('')).toMatch(/\x1b\[/); // styles are in play
    CASES.forEach((c, i) => {
      expect(cellsOf(draw(c)), c.name).toEqual(cellsOf(inks[i]!));
    });
  });

  it('clips text to overflow-hidden boxes as Ink does', () => {
    expect(stripAnsi(inkClipped)).toContain('3456789abcde\n');
    expect(cellsOf(drawClipped())).toEqual(cellsOf(inkClipped));
  });

  it('keeps drawing the App through keys and new snapshots', async () => {
    const controller = new FakeController(runningState());
    const r = renderAt(<App controller={controller} onExit={() => {}} />, 120, 40);
    await settle();
    r.stdin.write('?');
    await settle();
    expect(r.lines().join('\n')).toMatch(/keys/);
    r.unmount();
  });
});
