/**
 * NO_COLOR is honoured by our own `color` flag. Under vitest chalk sees no TTY and emits nothing, so
 * colours are forced on for this file; that makes "no colour codes with color=false" meaningful.
 */
import { vi } from 'vitest';

vi.hoisted(() => {
  process.env.FORCE_COLOR = '1';
});

import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { App } from '../../panels/App.js';
import { colorFromEnv } from '../../panels/theme.js';
import { FakeController } from '../helpers/fake-controller.js';
import { waitFor } from '../helpers/render.js';
import { runningState, STALLED } from './sample-state.js';

/** SGR foreground/background colour parameters: 30–37, 38;…, 39, 40–47, 48;…, 49, 90–97, 100–107. */
const COLOR_SGR = /\u001b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m/;

async function frameWith(color: boolean): Promise<string> {
  const ctl = new FakeController(runningState({ ranks: [STALLED], simulated: true, notice: 'SIGUSR1 sent' }));
  const r = render(<App controller={ctl} onExit={() => {}} color={color} />);
  await waitFor(() => (r.lastFrame() ?? '').includes('HANG rank'));
  const frame = r.lastFrame() ?? '';
  r.unmount();
  return frame;
}

describe('NO_COLOR', () => {
  it('reads NO_COLOR: any non-empty value turns colours off', () => {
    expect(colorFromEnv({ NO_COLOR: '1' })).toBe(false);
    expect(colorFromEnv({ NO_COLOR: 'yes' })).toBe(false);
    expect(colorFromEnv({ NO_COLOR: '' })).toBe(true);
    expect(colorFromEnv({})).toBe(true);
  });

  it('colours the dashboard when allowed', async () => {
    expect(await frameWith(true)).toMatch(COLOR_SGR);
  });

  it('emits no colour codes with color=false, but keeps the HANG banner inverse', async () => {
    const frame = await frameWith(false);
    expect(frame).not.toMatch(COLOR_SGR);
    expect(frame).toContain('\u001b[7m');
    expect(frame).toContain('HANG rank 0');
  });

  it('App defaults to the environment', async () => {
    const before = process.env.NO_COLOR;
    process.env.NO_COLOR = '1';
    try {
      const ctl = new FakeController(runningState({ ranks: [STALLED] }));
      const r = render(<App controller={ctl} onExit={() => {}} />);
      await waitFor(() => (r.lastFrame() ?? '').includes('HANG rank'));
      expect(r.lastFrame()).not.toMatch(COLOR_SGR);
      r.unmount();
    } finally {
      if (before === undefined) delete process.env.NO_COLOR;
      else process.env.NO_COLOR = before;
    }
  });
});
