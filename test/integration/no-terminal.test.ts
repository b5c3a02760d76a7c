/**
 * Without a terminal (a script, CI, `ssh host nsa-dbg …` without -t) every dashboard entry point
 * says one line and exits 2 before anything is launched: no run folder, no trainer process, no
 * notebook file or lock. Here neither stdin nor stdout is a terminal (stdin /dev/null or a pipe,
 * stdout a pipe); test/e2e/tmux-no-terminal.test.ts covers a terminal on stdout alone.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, type CliResult, runCli } from '../helpers/cli.js';

const NO_TERMINAL = 'nsa-dbg: the dashboard needs a terminal; use --headless';

function expectRefused(r: CliResult): void {
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(NO_TERMINAL);
  expect(r.stderr).not.toMatch(/Raw mode|\n\s+at /);
}

function fresh(): { home: string; runs: string; env: Record<string, string> } {
  const home = mkdtempSync(join(tmpdir(), 'nsa-notty-'));
  return { home, runs: join(home, 'runs'), env: { NSA_DBG_HOME: home } };
}

/** the CLI with a pipe on stdin that is written to and closed (`echo | nsa-dbg …`) */
function runPiped(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end('\n');
  });
}

describe('no terminal: one line, exit 2, nothing launched', () => {
  it('nsa-dbg demo </dev/null', async () => {
    const { runs, env } = fresh();
    expectRefused(await runCli(['demo', '--runs-dir', runs], { env }));
    expect(existsSync(runs) ? readdirSync(runs) : []).toEqual([]);
  });

  it('nsa-dbg run --lane L -- COMMAND, stdin a pipe: the command never runs', async () => {
    const { home, runs, env } = fresh();
    const marker = join(home, 'trainer-ran');
    expectRefused(
      await runPiped(['run', '--lane', 'baseline', '--runs-dir', runs, '--', 'touch', marker], env),
    );
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(runs) ? readdirSync(runs) : []).toEqual([]);
  });

  it('the notebook (echo | nsa-dbg --demo): no notebook file, no lock', async () => {
    const { home, env } = fresh();
    const r = await runPiped(['--demo'], env);
    expectRefused(r);
    expect(r.stderr).toContain('run --headless --notebook FILE');
    expect(readdirSync(home)).toEqual([]);
  });

  it("attach's dashboard: the run is left as it was", async () => {
    const { runs, env } = fresh();
    const made = await runCli(
      [
        'run',
        '--headless',
        '--demo',
        '--lane',
        'baseline',
        '--steps',
        '2',
        '--step-ms',
        '50',
        '--runs-dir',
        runs,
      ],
      { env },
    );
    expect(made.code, made.stderr).toBe(0);
    const [id] = readdirSync(runs);
    expect(id).toBeDefined();
    expectRefused(await runCli(['attach', id!, '--runs-dir', runs], { env }));
    // listing needs no terminal
    const list = await runCli(['attach', '--runs-dir', runs], { env });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(id!);
  });
});
