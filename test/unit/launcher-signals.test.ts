import { describe, expect, it } from 'vitest';
import { validateLane } from '../../src/lanes/lane.js';
import { buildRunSpec } from '../../src/runs/build-spec.js';
import { launcherScript, newRunId } from '../../src/runs/launcher.js';
import { cpuPctBetween, parseStat } from '../../src/runs/proc-facts.js';
import { catchesSignal, parseProcTable, processTree } from '../../src/runs/signals.js';
import { shJoin, shQuote } from '../../src/util/sh-quote.js';

describe('shell quoting', () => {
  it('leaves safe words bare and single-quotes everything else', () => {
    expect(shQuote('--steps')).toBe('--steps');
    expect(shQuote('')).toBe("''");
    expect(shQuote("it's $(x)")).toBe(`'it'\\''s $(x)'`);
    expect(shJoin(['a b', 'c'])).toBe("'a b' c");
  });
});

describe('launcher script', () => {
  const lane = validateLane({ name: 'lane', env: { A: "x'y" }, steps: 7 }, 'lane.yaml');
  const spec = buildRunSpec({ lane, runsRoot: '/r', cwd: '/w', command: ['python3', 'train.py'] });

  it('appends the steps flag and puts the run under the runs root', () => {
    expect(spec.argv).toEqual(['python3', 'train.py', '--steps', '7']);
    expect(spec.runDir.startsWith('/r/')).toBe(true);
    expect(spec.outDir).toBe(spec.runDir);
  });

  it('exports env quoted, execs the trainer so its pid is the recorded one, and records the exit status', () => {
    const s = launcherScript(spec);
    expect(s).toContain(`export A='x'\\''y'`);
    expect(s).toContain(`exec "$@"`);
    expect(s).toContain('exit_code');
    // the trainer writes the log itself; the terminal shows it through a follower
    expect(s).toContain('>> "$L" 2>&1');
    expect(s).toContain('tail -c');
    expect(launcherScript(spec, 'file')).not.toContain('tail');
  });

  it('makes sortable run ids', () => {
    const id = newRunId('batched-prefill', new Date(2026, 10, 22, 3, 4, 5), () => 0.5);
    expect(id).toBe('20261122-030405-batched-prefill-7fff');
  });
});

describe('signals', () => {
  it('reads SigCgt bits (SIGUSR1 is bit 9)', () => {
    expect(catchesSignal('0000000000000200', 10)).toBe(true);
    expect(catchesSignal('0000000180004002', 10)).toBe(false);
    expect(catchesSignal('0000000180004202', 10)).toBe(true);
  });

  it('walks the process tree from the run’s pid', () => {
    const procs = parseProcTable(
      '1 0 0 init\n10 1 0 sh\n11 10 200 python3\n12 11 0 worker\n20 1 200 other\n',
    );
    expect(processTree(procs, 10).map((p) => p.pid)).toEqual([10, 11, 12]);
    expect(processTree(procs, 99)).toEqual([]);
  });

  it('parses /proc/PID/stat with spaces and parens in the name', () => {
    const stat = '4162 (python3 (x) y) R 1 4162 4162 0 -1 4194304 100 0 0 0 250 30 0 0 20 0 3 0 1 1 1';
    expect(parseStat(stat)).toEqual({ state: 'R', ticks: 280 });
    expect(parseStat('garbage')).toEqual({ state: null, ticks: null });
  });

  it('turns two readings into CPU % of one core', () => {
    expect(cpuPctBetween({ ticks: 100, atMs: 0 }, { ticks: 250, atMs: 1500 })).toBe(100);
    expect(cpuPctBetween({ ticks: 100, atMs: 0 }, { ticks: 100, atMs: 2000 })).toBe(0);
    expect(cpuPctBetween({ ticks: null, atMs: 0 }, { ticks: 100, atMs: 2000 })).toBeNull();
  });
});
