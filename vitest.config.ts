import { defineConfig } from 'vitest/config';

// node-pty is not thread-safe (node-pty#579): every test file runs in its own forked process.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
