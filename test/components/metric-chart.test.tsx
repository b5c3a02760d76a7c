import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { MetricChart } from '../../panels/MetricChart.js';
import { frameLines } from '../helpers/render.js';
import { LOSS } from './sample-state.js';

describe('MetricChart', () => {
  it('puts the last raw value and the EMA in the title, then plot rows with a min/max axis', () => {
    const lines = frameLines(
      render(
        <MetricChart
          label="loss"
          points={LOSS}
          width={60}
          height={6}
          color={false}
          format={(v) => v.toFixed(4)}
        />,
      ).lastFrame(),
    );
    expect(lines).toHaveLength(6);
    expect(lines[0]).toMatch(/^loss 5\.7019 · ema 5\.70\d\d · step 17/);
    expect(lines[1]).toMatch(/^5\.74┤/);
    expect(lines[5]).toMatch(/^5\.67┤/);
    for (const l of lines.slice(1)) expect(l).toMatch(/[⠁-⣿]/);
  });

  it('waits for data without failing', () => {
    const lines = frameLines(
      render(<MetricChart label="loss" points={[]} width={40} height={4} color={false} />).lastFrame(),
    );
    expect(lines[0]).toBe('loss · waiting for steps');
    expect(lines).toHaveLength(4);
  });

  it('shows a NaN loss as such in the title', () => {
    const points = [...LOSS.slice(0, 2), { step: 3, value: Number.NaN }];
    const [title] = frameLines(
      render(<MetricChart label="loss" points={points} width={50} height={3} color={false} />).lastFrame(),
    );
    expect(title).toContain('loss NaN');
    expect(title).toContain('ema 5.70');
  });
});
