import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attachRun, newRun } from '../../src/launch/run.js';
import { hasTmux, readLaunchInfo } from '../../src/runs/detached.js';
import type { DetachedMode } from '../../src/runs/launch-spec.js';
import { newRunId, type RunSpec } from '../../src/runs/launcher.js';
import { LocalTarget } from '../../src/targets/local.js';
import { waitUntil } from '../helpers/wait.js';

// an isolated tmux server: the user's own sessions are never touched
process.env.TMUX_TMPDIR = mkdtempSync(join(tmpdir(), 'nsa-tmux-'));
const target = new LocalTarget();

afterAll(async () => {
  await target.exec(['tmux', 'kill-server']).catch(() => undefined);
});

function spec(mode: DetachedMode): RunSpec {
  const root = mkdtempSync(join(tmpdir(), 'nsa-det-'));
  const py = join(root, 'train.py');
  writeFileSync(
    py,
    "import os, sys, time\nfor i in range(1, 31):\n    print(f'step {i:04d} | loss 5.70 | lr 1.00e-04 | toks/s 80', flush=True)\n    time.sleep(0.05)\n",
  );
  const runDir = join(root, 'run');
  return {
    runId: newRunId('det'),
    runDir,
    argv: ['python3', py],
    env: {},
    cwd: root,
    lane: 'det',
    outDir: runDir,
    createdAt: '',
    launcher: { kind: 'detached', mode },
  };
}

const noop = { onFileChunk: () => {}, onPid: () => {}, onExit: () => {} };

describe.each(['tmux', 'nohup'] as const)('detached run (%s)', (mode) => {
  it('outlives its controller and is re-attached with every byte of evidence', async () => {
    if (mode === 'tmux') expect(await hasTmux(target)).toBe(true);
    const s = spec(mode);
    const first = newRun(target, s, noop);
    await first.start({ cols: 80, rows: 24 });
    expect((await readLaunchInfo(target, s.runDir))?.mode).toBe(mode);
    const pid = await first.waitForPid();
    // the controller (and its PTY) goes away mid-run, like a killed TUI
    await first.dispose();
    expect(await target.isAlive(pid!)).toBe(true);

    let seen = '';
    let exitCode: number | null | undefined;
    const again = await attachRun(target, s.runDir, {
      onFileChunk: (name: string, c: Buffer) => {
        if (name === 'stdout.log') seen += c.toString();
      },
      onPid: () => {},
      onExit: (c: number | null) => {
        exitCode = c;
      },
    });
    again.followEvidence();
    await waitUntil(() => exitCode !== undefined, { timeoutMs: 15_000, what: 'exit_code' });
    await again.dispose();
    expect(exitCode).toBe(0);
    expect(seen).toBe(readFileSync(join(s.runDir, 'stdout.log'), 'utf8'));
    expect(seen.match(/^step \d{4}/gm)).toHaveLength(30);
  });
});
