import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { HeartbeatPanel, stallPhrases } from '../../panels/HeartbeatPanel.js';
import type { RankView } from '../../src/session/state.js';
import { frameLines } from '../helpers/render.js';
import { rank0, STALLED } from './sample-state.js';

const panel = (ranks = [rank0()], width = 80, height = 6) =>
  frameLines(
    render(<HeartbeatPanel ranks={ranks} width={width} height={height} color={false} />).lastFrame(),
  );

describe('HeartbeatPanel', () => {
  it('shows one row per rank: rank, phase, step, age vs expected and a gap sparkline', () => {
    const row = panel().find((l) => l.startsWith('r0'));
    expect(row).toBeDefined();
    expect(row).toContain('progress');
    expect(row).toContain('step 17');
    expect(row).toContain('3.1s / exp 7.2s');
    expect(row).toMatch(/[▁▂▃▄▅▆▇█]{5,}/);
  });

  it('shows a HANG banner with the step number and the localisation', () => {
    const lines = panel([STALLED]);
    expect(lines[1]).toBe('HANG rank 0 · step 6 · in-step · 14s silent · CPU busy');
  });

  it('wraps the banner at phrase boundaries in a narrow pane instead of cutting it', () => {
    const lines = panel([STALLED], 39, 6);
    expect(lines[1]).toBe('HANG rank 0 · step 6 · in-step');
    expect(lines[2]).toBe('14s silent · CPU busy');
  });

  it('says SUSPECT while a silent rank is checked, BUSY when found alive, HANG (stuck) once confirmed', () => {
    const at = (stall: Partial<NonNullable<RankView['stall']>>) => ({
      ...STALLED,
      stall: { step: 2, where: 'in-step' as const, silenceS: 21, cpuBusy: true, hang: false, ...stall },
    });
    expect(stallPhrases(at({ state: 'checking', why: '1 sample(s), CPU 99%' }))).toEqual([
      'SUSPECT rank 0',
      'step 2',
      'in-step',
      '21s silent',
      'CPU busy',
      '1 sample(s), CPU 99%',
    ]);
    expect(stallPhrases(at({ state: 'busy', why: 'busy, not stuck: frames move' }))[0]).toBe('BUSY rank 0');
    expect(stallPhrases(at({ state: 'stuck', hang: true }))[0]).toBe('HANG rank 0 (stuck)');
    const busy = panel([at({ state: 'busy', why: 'busy, not stuck' })]);
    expect(busy[1]).toContain('BUSY rank 0');
    expect(busy.join('\n')).not.toContain('HANG rank');
  });

  it('omits CPU state when unknown and says idle when known idle', () => {
    const unknown = {
      ...STALLED,
      stall: { step: 6, where: 'end-of-step' as const, silenceS: 9.6, cpuBusy: null, hang: true },
    };
    expect(stallPhrases(unknown)).toEqual(['HANG rank 0', 'step 6', 'end-of-step', '10s silent']);
    const idle = {
      ...STALLED,
      stall: { step: 2, where: 'rollover' as const, silenceS: 30, cpuBusy: false, hang: true },
    };
    expect(stallPhrases(idle).at(-1)).toBe('CPU idle');
  });

  it('shows a placeholder before the first heartbeat, and counts ranks beyond the row cap', () => {
    expect(panel([])).toContain('no heartbeats yet');
    const many = Array.from({ length: 10 }, (_, i) => rank0({ rank: i }));
    expect(panel(many, 80, 12)).toContain('+2 more ranks');
  });

  it('shows dashes for a rank that has not beaten yet', () => {
    const row = panel([rank0({ lastBeatAgeS: null, expectedS: null, gaps: [] })]).find((l) =>
      l.startsWith('r0'),
    );
    expect(row).toContain('– / exp –');
  });
});
