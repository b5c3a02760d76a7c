import { defineConfig } from 'vitest/config';

// node-pty is not thread-safe (node-pty#579): every test file runs in its own forked process.
// Unit and component tests run in parallel; the tests that drive real processes (PTYs, sshd, tmux,
// timing-based stall detection) run one file at a time after them, so a 2-core CI box is not
// oversubscribed into false stalls.
export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 30_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'fast', include: ['test/unit/**/*.test.ts', 'test/components/**/*.test.{ts,tsx}'] },
      },
      {
        extends: true,
        test: {
          name: 'processes',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
