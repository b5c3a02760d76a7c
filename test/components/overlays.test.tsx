import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { HelpOverlay } from '../../panels/HelpOverlay.js';
import { LanePicker } from '../../panels/LanePicker.js';
import { QuitConfirm } from '../../panels/QuitConfirm.js';
import { BINDINGS } from '../../src/session/keymap.js';
import { DEFAULT_LANES } from '../helpers/fake-controller.js';
import { frameLines } from '../helpers/render.js';

const picker = (props: Partial<Parameters<typeof LanePicker>[0]> = {}) =>
  frameLines(
    render(
      <LanePicker
        lanes={DEFAULT_LANES}
        filter=""
        index={0}
        currentLane="baseline"
        width={100}
        height={12}
        color={false}
        {...props}
      />,
    ).lastFrame(),
  );

describe('LanePicker', () => {
  it('lists every lane with its description, marks the current one and shows the env of the selection', () => {
    const text = picker().join('\n');
    for (const lane of DEFAULT_LANES) {
      expect(text).toContain(lane.name);
      expect(text).toContain(lane.description);
    }
    expect(text).toContain('(current)');
    expect(text).toContain('env: NSA_TB_DISABLE=1 NSA_DISABLE_CSV_LOGS=1');
  });

  it('filters by what was typed and selects by index', () => {
    const lines = picker({ filter: 'batch', index: 0 });
    expect(lines.join('\n')).toContain('filter: batch');
    const selected = lines.find((l) => l.startsWith('› '));
    expect(selected).toContain('batched-prefill');
    expect(lines.join('\n')).toContain('env: NSA_DISABLE_AUX_STATS=1 NSA_PREFILL_BATCHED=1');
    expect(lines.join('\n')).not.toContain('fp32');
  });

  it('says when nothing matches', () => {
    expect(picker({ filter: 'zzz' }).join('\n')).toContain('no lane matches "zzz"');
  });

  it('keeps the selection visible in a short list window', () => {
    const lines = picker({ index: 4, height: 6 });
    expect(lines.find((l) => l.startsWith('› '))).toContain('anomaly');
  });

  it('asks to confirm that the current run will be stopped', () => {
    const text = picker({ confirming: 'batched-prefill' }).join('\n');
    expect(text).toContain('Stop the current run and start lane batched-prefill? y/n');
    expect(text).toContain('current lane baseline → batched-prefill');
    expect(text).toContain('NSA_PREFILL_BATCHED=1');
  });
});

describe('HelpOverlay', () => {
  it('lists every binding from the one table with its keys', () => {
    const text = frameLines(render(<HelpOverlay width={100} height={14} color={false} />).lastFrame()).join(
      '\n',
    );
    for (const b of BINDINGS) {
      expect(text).toContain(b.description);
      expect(text).toContain(b.keys.join(' / '));
    }
  });
});

describe('QuitConfirm', () => {
  it('shows what quitting does to the run and the y/n choice', () => {
    const text = frameLines(
      render(
        <QuitConfirm
          consequence="The run (pid 4162) will be stopped."
          busy={false}
          width={80}
          height={5}
          color={false}
        />,
      ).lastFrame(),
    ).join('\n');
    expect(text).toContain('Quit nsa-dbg? y/n');
    expect(text).toContain('The run (pid 4162) will be stopped.');
  });

  it('says it is quitting once confirmed', () => {
    const text = frameLines(
      render(<QuitConfirm consequence="x" busy width={80} height={5} color={false} />).lastFrame(),
    ).join('\n');
    expect(text).toContain('Quitting…');
    expect(text).not.toContain('y/n');
  });
});
