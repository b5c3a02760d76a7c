import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../panels/App.js';
import { asCellView } from '../../src/notebook/cell-view.js';
import { BINDINGS } from '../../src/session/keymap.js';
import type { SessionController } from '../../src/session/state.js';
import { FakeController } from '../helpers/fake-controller.js';
import { KEYS, stripAnsi, waitFor } from '../helpers/render.js';
import { logLines, rank0, runningState, STALLED } from './sample-state.js';

function start(
  controller = new FakeController(runningState({ log: { lines: logLines(60), total: 60 } })),
  shown: SessionController = controller,
) {
  const onExit = vi.fn();
  const r = render(<App controller={shown} onExit={onExit} color={false} />);
  const frame = () => stripAnsi(r.lastFrame() ?? '');
  const until = (text: string) =>
    waitFor(
      () => frame().includes(text),
      () => `"${text}" in:\n${frame()}`,
    );
  const press = async (key: string, expectText?: string) => {
    r.stdin.write(key);
    if (expectText) await until(expectText);
  };
  return { ...r, controller, onExit, frame, until, press };
}

let current: ReturnType<typeof start> | null = null;
const app = (controller?: FakeController, shown?: SessionController) => {
  current = start(controller, shown);
  return current;
};
afterEach(() => {
  current?.unmount();
  current = null;
});

describe('App', () => {
  it('renders the snapshot and follows new snapshots pushed by the controller', async () => {
    const t = app();
    await t.until('step 17/40');
    t.controller.push({ step: 18, log: { lines: logLines(61), total: 61 } });
    await t.until('step 18/40');
    await t.until('step 0060');
  });

  it('unsubscribes on unmount', async () => {
    const t = app();
    await t.until('step 17/40');
    expect(t.controller.subscriberCount()).toBe(1);
    t.unmount();
    current = null;
    expect(t.controller.subscriberCount()).toBe(0);
  });

  it('d requests a dump and shows the outcome as a notice', async () => {
    const t = app();
    await t.until('step 17/40');
    await t.press('d', 'SIGUSR1 sent to pid 4162; dump stackdump_1795315501.txt');
    expect(t.controller.calls).toEqual([{ method: 'requestDump' }]);
  });

  it('shows a failed dump request instead of crashing', async () => {
    const ctl = new FakeController(runningState());
    ctl.requestDump = async () => {
      throw new Error('no SIGUSR1 handler yet (SigCgt)');
    };
    const t = app(ctl);
    await t.until('step 17/40');
    await t.press('d', 'stack dump failed: no SIGUSR1 handler yet (SigCgt)');
  });

  it('l → type "batch" → Enter → y switches to batched-prefill', async () => {
    const t = app(new FakeController(runningState({ lane: 'baseline' })));
    await t.until('lane baseline');
    await t.press('l', 'switch lane');
    await t.press('batch', 'filter: batch');
    await t.press(KEYS.enter, 'Stop the current run and start lane batched-prefill? y/n');
    expect(t.controller.calls).toEqual([]);
    await t.press('y', 'lane batched-prefill started');
    expect(t.controller.calls).toEqual([{ method: 'switchLane', lane: 'batched-prefill' }]);
    expect(t.frame()).not.toContain('switch lane ·');
  });

  it('typed letters go to the filter, not to commands, while the picker is open', async () => {
    const t = app();
    await t.until('step 17/40');
    await t.press('l', 'switch lane');
    await t.press('q', 'filter: q');
    await t.press('d', 'filter: qd');
    await t.press(KEYS.backspace, 'filter: q');
    expect(t.controller.calls).toEqual([]);
    expect(t.frame()).not.toContain('Quit nsa-dbg');
  });

  it('Esc cancels the picker, and n in the confirm step goes back to the list', async () => {
    const t = app();
    await t.until('step 17/40');
    await t.press('l', 'switch lane');
    await t.press('fp', 'filter: fp');
    await t.press(KEYS.enter, 'start lane fp32? y/n');
    await t.press('n', 'filter: fp');
    await t.press(KEYS.escape);
    await waitFor(
      () => !t.frame().includes('switch lane'),
      () => t.frame(),
    );
    expect(t.controller.calls).toEqual([]);
  });

  it('↑/↓ move the selection in the picker', async () => {
    const t = app();
    await t.until('step 17/40');
    await t.press('l', '› baseline');
    await t.press(KEYS.down, '› batched-prefill');
    await t.press(KEYS.down, '› conservative');
    await t.press(KEYS.up, '› batched-prefill');
  });

  it('q asks first with the quit consequence, then y quits and exits', async () => {
    const t = app();
    await t.until('step 17/40');
    await t.press('q', 'Quit nsa-dbg? y/n');
    expect(t.frame()).toContain('The local run (pid 4162) will be stopped: .HALT, then SIGINT.');
    expect(t.onExit).not.toHaveBeenCalled();
    await t.press('y');
    await waitFor(
      () => t.onExit.mock.calls.length === 1,
      () => 'onExit called',
    );
    expect(t.controller.calls).toEqual([{ method: 'quit' }]);
  });

  it('the footer lists s and t with the other keys', async () => {
    const t = app();
    await t.until('step 17/40');
    expect(t.frame()).toContain('d dump  s hot frames  l lane  t terminal  G follow  ? help  q quit');
  });

  it("a notebook cell's dashboard: q goes straight back, no prompt; l says why it cannot act", async () => {
    const fake = new FakeController(runningState({ log: { lines: logLines(60), total: 60 } }));
    const release = vi.fn();
    const t = app(fake, asCellView(fake, null, release));
    await t.until('q back');
    await t.press('l', 'a cell keeps its lane');
    expect(t.frame()).not.toContain('filter');
    await t.press('q');
    await waitFor(
      () => t.onExit.mock.calls.length === 1,
      () => `onExit called; frame:\n${t.frame()}`,
    );
    expect(t.frame()).not.toContain('Quit nsa-dbg?');
    expect(release).toHaveBeenCalledTimes(1);
    // leaving a cell's dashboard stops nothing
    expect(fake.calls).toEqual([]);
  });

  it('a finished run: d and s say the run has ended instead of doing nothing', async () => {
    const fake = new FakeController(
      runningState({ runState: 'exited', exitCode: 0, log: { lines: logLines(60), total: 60 } }),
    );
    const t = app(fake);
    await t.until('exited 0');
    await t.press('d', 'the run has ended: no process left to dump');
    await t.press('s', 'the run has ended: no process left to sample');
    expect(fake.calls).toEqual([]);
  });

  it('n at the quit prompt stays', async () => {
    const t = app();
    await t.until('step 17/40');
    await t.press('q', 'Quit nsa-dbg? y/n');
    await t.press('n');
    await waitFor(
      () => !t.frame().includes('Quit nsa-dbg'),
      () => t.frame(),
    );
    expect(t.controller.calls).toEqual([]);
    expect(t.onExit).not.toHaveBeenCalled();
  });

  it('? shows every binding description and ? again hides it', async () => {
    const t = app();
    await t.until('step 17/40');
    await t.press('?', 'keys · Esc or ? closes');
    for (const b of BINDINGS) expect(t.frame()).toContain(b.description);
    await t.press('?');
    await waitFor(
      () => !t.frame().includes('keys · Esc'),
      () => t.frame(),
    );
  });

  it('scroll keys move the log window, and G follows again', async () => {
    const t = app();
    await t.until('step 0059');
    await t.press('k', '— 1 more below —');
    await t.press(KEYS.up, '— 2 more below —');
    await t.press('j', '— 1 more below —');
    await t.press(KEYS.pageUp, 'more below —');
    expect(t.frame()).not.toContain('step 0059');
    await t.press('G', 'following');
    expect(t.frame()).toContain('step 0059');
    expect(t.frame()).not.toContain('more below');
  });

  it('keeps a scrolled-up window on the same lines while output arrives', async () => {
    const t = app();
    await t.until('step 0059');
    await t.press('k', '— 1 more below —');
    t.controller.push({ log: { lines: logLines(64), total: 64 } });
    await t.until('— 5 more below —');
    expect(t.frame()).not.toContain('step 0063');
  });

  it('shows the HANG banner when a rank stalls', async () => {
    const t = app();
    await t.until('step 17/40');
    expect(t.frame()).not.toContain('HANG rank');
    t.controller.push({ ranks: [STALLED, rank0({ rank: 1 })] });
    // The heartbeat pane is half of 100 columns, so the banner wraps at a phrase boundary.
    await t.until('HANG rank 0 · step 6 · in-step · 14s silent');
    expect(t.frame()).toMatch(/\n *CPU busy/);
  });

  it('keeps one stable input subscription across many snapshots (no dropped keys)', async () => {
    const t = app();
    await t.until('step 17/40');
    for (let i = 0; i < 20; i++) t.controller.push({ step: 17 + i });
    t.stdin.write('d');
    await t.until('SIGUSR1 sent');
    expect(t.controller.calls).toEqual([{ method: 'requestDump' }]);
  });
  it('keys that arrive as one chunk ("dq": typed fast, a loaded machine) are each acted on', async () => {
    const t = app();
    await t.until('step 17/40');
    await t.press('dq', 'y/n');
    expect(t.controller.calls).toEqual([{ method: 'requestDump' }]);
    // in the lane filter a chunk is text: "ba" filters, it does not open anything
    await t.press(KEYS.escape);
    await waitFor(
      () => !t.frame().includes('y/n'),
      () => t.frame(),
    );
    await t.press('l', 'switch lane');
    await t.press('ba', 'filter: ba');
    expect(t.controller.calls).toEqual([{ method: 'requestDump' }]);
  });
});
