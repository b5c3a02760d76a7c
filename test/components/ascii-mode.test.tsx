/**
 * ASCII mode: every frame of the real App (dashboard and each overlay, at 80×24 and 120×40, with
 * remote text in other scripts) holds printable ASCII only, and still draws its charts and bars.
 * Colours are forced on for the file so that NO_COLOR's "no colour codes" is meaningful here too.
 */
import { vi } from 'vitest';

vi.hoisted(() => {
  process.env.FORCE_COLOR = '1';
});

import { describe, expect, it } from 'vitest';
import { App } from '../../panels/App.js';
import { DEFAULT_LANES, FakeController } from '../helpers/fake-controller.js';
import { renderAt, type SizedRender, stripAnsi, waitFor } from '../helpers/render.js';
import { DUMP, logLines, runningState, STALLED } from './sample-state.js';

const PRINTABLE_ASCII_LINE = /^[\u0020-\u007e]*$/;
const COLOR_SGR = /\u001b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m/;

function state() {
  const log = logLines(30);
  log.push({ id: 30, text: 'café ✓ 日本語 — ok' });
  return runningState({
    ranks: [STALLED],
    simulated: true,
    notice: 'SIGUSR1 sent → dump',
    log: { lines: log, total: 31 },
    dump: { ...DUMP, userFrame: 1 },
  });
}

const lanes = [
  ...DEFAULT_LANES,
  { name: 'ünïcode', description: 'naïve “quotes” → arrows', env: { K: 'v·w' } },
];

/** Every line of the frame (styling removed) is printable ASCII. */
function expectAsciiFrame(r: SizedRender): string {
  const frame = r.lastFrame();
  const lines = stripAnsi(frame).split('\n');
  for (const line of lines) expect(line).toMatch(PRINTABLE_ASCII_LINE);
  // nothing but SGR styling remains besides the text
  expect(frame.replace(/\u001b\[[0-9;]*m/g, '')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\uffff]/);
  return lines.join('\n');
}

async function press(r: SizedRender, key: string, until: (text: string) => boolean) {
  r.stdin.write(key);
  await waitFor(
    () => until(stripAnsi(r.lastFrame())),
    () => `after ${JSON.stringify(key)}:\n${stripAnsi(r.lastFrame())}`,
  );
}

describe.each([
  [80, 24],
  [120, 40],
])('ASCII mode at %i×%i', (columns, rows) => {
  it.each([true, false])('dashboard and every overlay are printable ASCII (color %s)', async (color) => {
    const ctl = new FakeController(state(), { lanes, consequence: 'The run’s PTY closes → stopped' });
    const r = renderAt(<App controller={ctl} onExit={() => {}} color={color} ascii />, columns, rows);
    await waitFor(() => stripAnsi(r.lastFrame()).includes('HANG rank'));

    const dashboard = expectAsciiFrame(r);
    expect(dashboard).toMatch(/loss 5\.7019 \| ema/); // "·" folded
    expect(dashboard).toMatch(/ [#.|]{8,} +\d+%/); // the VRAM gauge
    expect(dashboard).toMatch(/\d\+?[-'.|]/); // a plotted chart row after its axis
    if (columns >= 120) expect(dashboard).toContain('caf? ? ??? - ok');
    if (!color) expect(r.lastFrame()).not.toMatch(COLOR_SGR);
    else expect(r.lastFrame()).toMatch(COLOR_SGR);

    await press(r, '?', (t) => t.includes('Esc or ? closes'));
    expectAsciiFrame(r);
    await press(r, '\u001b', (t) => t.includes('heartbeats'));

    await press(r, 'l', (t) => t.includes('switch lane'));
    expect(expectAsciiFrame(r)).toContain('?n?code');
    await press(r, 'G', (t) => t.includes('filter: G'));
    await press(r, '\u007f', (t) => t.includes('switch lane') && !t.includes('filter: G'));
    await press(r, '\r', (t) => t.includes('y/n'));
    expectAsciiFrame(r);
    await press(r, '\u001b', (t) => t.includes('heartbeats'));

    await press(r, 'q', (t) => t.includes('Quit nsa-dbg? y/n'));
    expect(expectAsciiFrame(r)).toContain("The run's PTY closes > stopped");
    r.unmount();
  });
});

describe('Unicode mode (the default) for comparison', () => {
  it('draws braille charts and block bars, which ASCII mode replaces', async () => {
    const ctl = new FakeController(state());
    const r = renderAt(<App controller={ctl} onExit={() => {}} color={false} />, 120, 40);
    await waitFor(() => stripAnsi(r.lastFrame()).includes('HANG rank'));
    const frame = stripAnsi(r.lastFrame());
    expect(frame).toMatch(/[\u2801-\u28ff]/);
    expect(frame).toMatch(/[█░]/);
    expect(frame).toContain('café ✓ 日本語');
    r.unmount();
  });
});
