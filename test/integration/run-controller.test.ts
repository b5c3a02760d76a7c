import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newRunId, type RunSpec } from '../../src/runs/launcher.js';
import { ptyKind } from '../../src/runs/pty-kind.js';
import { RunController } from '../../src/runs/run-controller.js';
import { catchesSignal, listProcesses } from '../../src/runs/signals.js';
import { LocalTarget } from '../../src/targets/local.js';
import { waitUntil } from '../helpers/wait.js';

const target = new LocalTarget();
const runs: RunController[] = [];

afterEach(async () => {
  for (const r of runs.splice(0)) {
    if (r.pid && !r.exited) await target.signal(r.pid, 'KILL').catch(() => undefined);
    await r.dispose();
  }
});

function spec(script: string, env: Record<string, string> = {}): RunSpec {
  const root = mkdtempSync(join(tmpdir(), 'nsa-run-'));
  const runDir = join(root, 'run');
  const py = join(root, 'train.py');
  writeFileSync(py, script);
  return {
    runId: newRunId('t'),
    runDir,
    argv: ['python3', py],
    env,
    cwd: root,
    lane: 't',
    outDir: runDir,
    createdAt: new Date().toISOString(),
    launcher: { kind: 'pty' },
  };
}

function start(s: RunSpec, chunks: string[] = []): RunController {
  const r = new RunController(
    target,
    s,
    {
      onFileChunk: (name, c) => {
        if (name === 'stdout.log') chunks.push(c.toString());
      },
      onPid: () => {},
      onExit: () => {},
    },
    { kind: ptyKind },
  );
  runs.push(r);
  return r;
}

describe('launcher + run controller on a real PTY', () => {
  it('records the trainer’s own pid and exit status, passes env literally, captures stdout', async () => {
    const hostile = `$(touch pwned) \`touch pwned2\` 'single' "double" two  spaces\nnew line $HOME`;
    const s = spec(
      "import json, os, sys\nprint('PID', os.getpid())\nprint('VAL', json.dumps(os.environ['HOSTILE']))\nsys.exit(3)\n",
      { HOSTILE: hostile },
    );
    const chunks: string[] = [];
    const r = start(s, chunks);
    await r.start();
    await waitUntil(() => r.exited, { what: 'exit' });
    expect(r.exitCode).toBe(3);
    const out = readFileSync(join(s.runDir, 'stdout.log'), 'utf8');
    expect(out).toContain(`PID ${r.pid}`);
    const val = out.split('\n').find((l) => l.startsWith('VAL '))!;
    expect(JSON.parse(val.slice(4))).toBe(hostile);
    expect(existsSync(join(s.cwd, 'pwned'))).toBe(false);
    expect(existsSync(join(s.cwd, 'pwned2'))).toBe(false);
    await waitUntil(() => chunks.join('').includes('VAL'), { what: 'stdout chunks' });
    expect(JSON.parse(readFileSync(join(s.runDir, 'command.json'), 'utf8')).env.HOSTILE).toBe(hostile);
  });

  it('sends SIGUSR1 only once SigCgt shows a handler, and only to the process that has it', async () => {
    const s = spec(
      [
        'import os, signal, sys, time',
        "go = os.path.join(os.path.dirname(sys.argv[0]), 'go')",
        'while not os.path.exists(go): time.sleep(0.02)',
        "signal.signal(signal.SIGUSR1, lambda *a: open(os.path.join(os.path.dirname(sys.argv[0]), 'dumped'), 'w').write('x'))",
        "print('ready', flush=True)",
        'while True: time.sleep(0.05)',
      ].join('\n'),
    );
    const chunks: string[] = [];
    const r = start(s, chunks);
    await r.start();
    const pid = await r.waitForPid();
    expect(pid).toBeGreaterThan(0);
    expect((await r.requestDump()).message).toMatch(/not sent/);
    expect(await target.isAlive(pid!)).toBe(true);
    writeFileSync(join(s.cwd, 'go'), '');
    await waitUntil(() => chunks.join('').includes('ready'), { what: 'handler installed' });
    const procs = await listProcesses(target);
    expect(catchesSignal(procs.find((p) => p.pid === pid)!.sigCgt, 10)).toBe(true);
    expect((await r.requestDump()).message).toContain(`pid ${pid}`);
    await waitUntil(() => existsSync(join(s.cwd, 'dumped')), { what: 'handler ran' });
  });

  it('stops by .HALT when the trainer polls it, without signals', async () => {
    const s = spec(
      [
        'import os, signal, sys, time',
        'signal.signal(signal.SIGTERM, lambda *a: None)',
        "halt = os.path.join(sys.argv[1] if len(sys.argv) > 1 else '.', '.HALT')",
        'while not os.path.exists(halt): time.sleep(0.05)',
        "print('halted gracefully', flush=True)",
      ].join('\n'),
    );
    s.argv.push(s.outDir);
    const r = start(s);
    await r.start();
    await r.waitForPid();
    const step = await r.stop({ halt: true, haltWaitS: 5, sigintWaitS: 5 }, { stalled: false });
    expect(step).toBe('halt');
    await waitUntil(() => r.exited, { what: 'exit' });
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(s.outDir, '.HALT'), 'utf8')).toBe('halt: manual_stop\n');
  });

  it('skips .HALT for a stalled run and escalates SIGINT → SIGKILL when SIGINT is ignored', async () => {
    const s = spec(
      "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ignoring', flush=True)\nwhile True: pass\n",
    );
    const chunks: string[] = [];
    const r = start(s, chunks);
    await r.start();
    await r.waitForPid();
    // a SIGINT before Python installs SIG_IGN would end it the ordinary way
    await waitUntil(() => chunks.join('').includes('ignoring'), { what: 'handlers installed' });
    const steps: string[] = [];
    const step = await r.stop(
      { halt: true, haltWaitS: 30, sigintWaitS: 0.5 },
      { stalled: true, onStep: (x) => steps.push(x) },
    );
    expect(steps).toEqual(['sigint', 'sigkill']);
    expect(step).toBe('sigkill');
    await waitUntil(() => r.exited, { what: 'exit' });
    expect(r.exitCode).toBe(137);
    expect(existsSync(join(s.outDir, '.HALT'))).toBe(false);
  });
});

describe('a dump without a SIGUSR1 handler', () => {
  // py-spy is not packaged for this machine, so a stand-in with py-spy's CLI and output format is
  // put on PATH; what is tested is that nsa-dbg never signals, runs py-spy instead, and files its
  // output where the dump parsers pick it up.
  it('uses py-spy when the box has it, and names the tool to install when it does not', async () => {
    const s = spec("import time\nprint('up', flush=True)\nwhile True: time.sleep(0.05)\n");
    const chunks: string[] = [];
    const names: string[] = [];
    const r = new RunController(
      target,
      s,
      {
        onFileChunk: (name, c) => {
          names.push(name);
          if (name === 'stdout.log') chunks.push(c.toString());
        },
        onPid: () => {},
        onExit: () => {},
      },
      { kind: ptyKind },
    );
    runs.push(r);
    await r.start();
    const pid = (await r.waitForPid())!;
    await waitUntil(() => chunks.join('').includes('up'), { what: 'started' });

    const pathBefore = process.env.PATH;
    process.env.PATH = '/usr/bin:/bin';
    try {
      expect((await r.requestDump()).message).toMatch(/not sent.*pip install py-spy/);
    } finally {
      process.env.PATH = pathBefore;
    }

    const bin = mkdtempSync(join(tmpdir(), 'nsa-pyspy-'));
    const fixture = join(import.meta.dirname, '..', 'fixtures', 'synthetic', 'pyspy_dump.pyspy.txt');
    writeFileSync(
      join(bin, 'py-spy'),
      `#!/bin/sh\n[ "$1" = dump ] && [ "$2" = --pid ] && [ "$3" = ${pid} ] || exit 2\ncat '${fixture}'\n`,
      { mode: 0o755 },
    );
    process.env.PATH = `${bin}:${pathBefore}`;
    try {
      expect((await r.requestDump()).message).toMatch(/took a py-spy dump instead \(pyspy_\d+\.pyspy\.txt\)/);
    } finally {
      process.env.PATH = pathBefore;
    }
    await waitUntil(() => names.some((n) => /^pyspy_\d+\.pyspy\.txt$/.test(n)), { what: 'dump followed' });
    expect(await target.isAlive(pid)).toBe(true);
  });
});
