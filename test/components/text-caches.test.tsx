/**
 * Ink 6.8 keeps every text it measured or wrapped for the life of the process; the dashboard's log
 * and clock change every frame. panels/ink-text-caches.ts catches both caches and empties them at
 * a bound. Rendered through Ink itself: hundreds of distinct lines leave the caches under the bound,
 * and every frame still reads what was drawn (a cleared cache only costs a measure).
 */
import { Box, Text } from 'ink';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { installBoundedTextCaches, textCacheSizes } from '../../panels/ink-text-caches.js';
import { settle, stripAnsi } from '../helpers/render.js';

const BOUND = 50;

function Lines({ n }: { n: number }) {
  const lines = [0, 1, 2, 3].map((i) => `line ${n * 4 + i} of the log, a little longer than the box is wide`);
  return (
    <Box flexDirection="column">
      {lines.map((line) => (
        <Text key={line} wrap="truncate">
          {line}
        </Text>
      ))}
    </Box>
  );
}

describe('Ink’s text caches, bounded', () => {
  it('are caught on this Ink and stay under the bound through 300 frames of new lines, drawn right', async () => {
    expect(await installBoundedTextCaches(BOUND)).toBe(true);
    expect(textCacheSizes()).toEqual({ texts: 0, wraps: 0 });
    const r = render(<Lines n={0} />);
    let most = 0;
    for (let n = 1; n <= 300; n++) {
      r.rerender(<Lines n={n} />);
      await settle(1);
      const sizes = textCacheSizes()!;
      most = Math.max(most, sizes.texts, sizes.wraps);
      if (n % 50 === 0) {
        const frame = stripAnsi(r.lastFrame() ?? '');
        for (let i = 0; i < 4; i++) expect(frame).toContain(`line ${n * 4 + i} of the log`);
      }
    }
    r.unmount();
    // 300 frames × 4 lines measured, wrapped and measured again: well over a thousand texts
    expect(most).toBeGreaterThan(BOUND / 2);
    expect(most).toBeLessThanOrEqual(BOUND);
  });
});
