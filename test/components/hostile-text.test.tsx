/**
 * Every string of a dashboard state, and of the lanes and the quit prompt, is prefixed with terminal
 * escapes and bidi overrides; the App draws the dashboard and each overlay. Nothing of them may
 * reach the frame: only Ink's own SGR styling, no other escape, control or bidi character, no
 * payload. The state is filled by walking it, so a string field added later and drawn without
 * `useClean` fails here.
 */
import { describe, expect, it } from 'vitest';
import { App } from '../../panels/App.js';
import type { DashboardState, LaneSummary } from '../../src/session/state.js';
import { DEFAULT_LANES, FakeController } from '../helpers/fake-controller.js';
import { renderAt, type SizedRender, stripAnsi, waitFor } from '../helpers/render.js';
import { DUMP, runningState, STALLED } from './sample-state.js';

const HOSTILE = [
  '\u001b]0;PWNED\u0007',
  '\u001b]52;c;PWNED\u001b\\',
  '\u001b[2J\u001b[H\u001b[?1049l\u001b[?25h',
  '\u009b2J\u009d2;PWNED\u009c',
  '\u001bPtmux;PWNED\u001b\\',
  '\u001bc\u001b7',
  '\u202e\u2066\u200f',
  '\r\u0008\u0007\t',
].join('');

/** A copy of `value` with HOSTILE in front of every string value (field names stay). */
function poison<T>(value: T): T {
  if (typeof value === 'string') return (HOSTILE + value) as T;
  if (Array.isArray(value)) return value.map(poison) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, poison(v)])) as T;
  }
  return value;
}

/** Lanes with every value poisoned, and the env's names too (they are data, not fields). */
function poisonLanes(lanes: readonly LaneSummary[]): LaneSummary[] {
  return lanes.map((l) => ({
    ...poison(l),
    env: Object.fromEntries(Object.entries(l.env).map(([k, v]) => [poison(k), poison(v)])),
  }));
}

function expectNothingLeaked(r: SizedRender): void {
  const frame = r.lastFrame();
  const unstyled = frame.replace(/\u001b\[[0-9;]*m/g, '');
  const bad = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.exec(unstyled);
  if (bad) throw new Error(`${JSON.stringify(unstyled.slice(Math.max(0, bad.index - 60), bad.index + 20))}`);
  expect(unstyled).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  expect(unstyled).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
  expect(frame).not.toContain('PWNED');
}

async function press(r: SizedRender, key: string, until: (text: string) => boolean) {
  r.stdin.write(key);
  await waitFor(
    () => until(stripAnsi(r.lastFrame())),
    () => `after ${JSON.stringify(key)}:\n${stripAnsi(r.lastFrame())}`,
  );
}

const base = runningState({
  ranks: [STALLED],
  simulated: true,
  notice: 'dump requested',
  verdict: { verdict: 'hang', summary: 'hang at step 6 (in-step), rank 0' },
  connection: { state: 'reconnecting', outageS: 4, attempts: 2 },
  gpu: { ...runningState().gpu, available: true },
  dump: { ...DUMP, userFrame: 1 },
});

describe('remote text with escapes, controls and bidi overrides', () => {
  it.each([
    ['with notice, verdict and outage', base],
    ['with the lane description (nothing else in the status line)', { ...base, notice: null, verdict: null }],
    [
      'with nvidia-smi unavailable (its message drawn)',
      { ...base, gpu: { ...base.gpu, available: false, message: 'nvidia-smi failed: no devices' } },
    ],
  ])('never reaches the frame: dashboard %s, and every overlay', async (_name, state) => {
    const lanes = poisonLanes(DEFAULT_LANES);
    const ctl = new FakeController(poison<DashboardState>(state), {
      lanes,
      consequence: poison('The run will be stopped.'),
    });
    const r = renderAt(<App controller={ctl} onExit={() => {}} color={false} />, 160, 50);
    await waitFor(
      () => stripAnsi(r.lastFrame()).includes('HANG rank'),
      () => stripAnsi(r.lastFrame()),
    );
    expectNothingLeaked(r);
    expect(stripAnsi(r.lastFrame())).toContain('grouped_selection_attention_packed');

    await press(r, 'l', (t) => t.includes('switch lane'));
    expectNothingLeaked(r);
    await press(r, '\r', (t) => t.includes('y/n'));
    expectNothingLeaked(r);
    await press(r, '\u001b', (t) => t.includes('heartbeats'));
    await press(r, 'q', (t) => t.includes('Quit nsa-dbg? y/n'));
    expectNothingLeaked(r);
    expect(stripAnsi(r.lastFrame())).toContain('The run will be stopped.');
    r.unmount();
  });
});
