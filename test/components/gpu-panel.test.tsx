import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { GpuPanel } from '../../panels/GpuPanel.js';
import type { GpuView } from '../../src/session/state.js';
import { frameLines } from '../helpers/render.js';
import { runningState } from './sample-state.js';

const GPU = runningState().gpu;
const panel = (gpu: GpuView, width = 80, height = 6) =>
  frameLines(render(<GpuPanel gpu={gpu} width={width} height={height} color={false} />).lastFrame()).join(
    '\n',
  );

describe('GpuPanel', () => {
  it('shows a used/total bar with MiB numbers, util and temperature per GPU', () => {
    const text = panel(GPU);
    expect(text).toMatch(/0 [█░┃]+ +1% · 2,123\/143,771 MiB · util 1% · 41°C · H200/);
  });

  it('shows torch allocated/reserved, the lane limit and the compute processes', () => {
    const text = panel(GPU);
    expect(text).toContain('torch alloc 92 / rsvd 412 MiB · peak 412');
    expect(text).toContain('limit 40,000 MiB');
    expect(text).not.toContain('EXCEEDED');
    expect(text).toContain('pid 3616 python3 1,772 MiB');
  });

  it('marks the limit when the peak exceeds it', () => {
    expect(panel({ ...GPU, peakReservedMiB: 41_200 })).toContain('limit 40,000 MiB EXCEEDED');
  });

  it('drops details, not the bar, in a narrow pane', () => {
    const text = panel(GPU, 39);
    expect(text).toMatch(/0 [█░┃]{8,} +1% · 2,123\/143,771 MiB/);
  });

  it('says why there is no GPU data instead of failing', () => {
    const text = panel({
      available: false,
      message: 'nvidia-smi not found',
      simulated: false,
      gpus: [],
      processes: [],
    });
    expect(text).toContain('nvidia-smi not found');
    expect(text).toContain('torch memory: no heartbeat yet');
  });

  it('marks simulated numbers', () => {
    expect(panel({ ...GPU, simulated: true }).split('\n')[0]).toContain('GPU (simulated)');
  });
});
