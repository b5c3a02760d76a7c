/**
 * A run picked up again (`attach`) whose trainer is gone and left no exit_code has ended, status
 * unknown: the process kinds look twice, apart, on the real /proc of this machine. A run with its
 * exit_code, or whose process still lives, is left to its own end.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT_CODE_FILE, PID_FILE } from '../../../src/ingest/launcher-files.js';
import type { LaunchContext } from '../../../src/runs/launch-kind.js';
import type { RunSpec } from '../../../src/runs/launcher.js';
import { endIfLost } from '../../../src/runs/process-launch.js';
import { LocalTarget } from '../../../src/targets/local.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-end-if-lost-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function runDir(name: string, files: Record<string, string>): string {
  const dir = join(work, name);
  spawnSync('mkdir', ['-p', dir]);
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  return dir;
}

function context(dir: string) {
  const ended: Array<number | null> = [];
  const ctx = {
    target: new LocalTarget(),
    spec: { runDir: dir } as RunSpec,
    events: { ended: (c: number | null) => ended.push(c) },
    exited: () => ended.length > 0,
  } as unknown as LaunchContext;
  return { ctx, ended };
}

/** the pid of a process that has exited (and been reaped) */
function deadPid(): number {
  const r = spawnSync('sh', ['-c', 'echo $$']);
  return Number(r.stdout.toString().trim());
}

describe('endIfLost (a process kind picking up a run)', () => {
  it('a gone process with no exit_code: ended, status unknown', async () => {
    const { ctx, ended } = context(runDir('lost', { [PID_FILE]: `${deadPid()}\n` }));
    await endIfLost(ctx, 50);
    expect(ended).toEqual([null]);
  });

  it('a gone process that wrote its exit_code: left to the exit_code', async () => {
    const dir = runDir('done', { [PID_FILE]: `${deadPid()}\n`, [EXIT_CODE_FILE]: '0\n' });
    const { ctx, ended } = context(dir);
    await endIfLost(ctx, 50);
    expect(ended).toEqual([]);
  });

  it('a live process: not ended', async () => {
    const child = spawn('sleep', ['30']);
    try {
      const { ctx, ended } = context(runDir('alive', { [PID_FILE]: `${child.pid}\n` }));
      await endIfLost(ctx, 50);
      expect(ended).toEqual([]);
    } finally {
      child.kill();
    }
  });

  it('no pid file yet: not ended (the run may still be starting)', async () => {
    const { ctx, ended } = context(runDir('starting', {}));
    await endIfLost(ctx, 50);
    expect(ended).toEqual([]);
  });
});
