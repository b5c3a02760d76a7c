/**
 * SshTarget against a real sshd: literal env and argv (no shell injection), PTY interaction,
 * files over SFTP, signals, streaming exec, and promises that reject instead of hanging while the
 * box is unreachable.
 */

import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CommandTimeoutError,
  connectSshTarget,
  SshError,
  type SshTarget,
} from '../../src/targets/ssh/index.js';
import { startSshd, type TestSshd } from '../helpers/sshd.js';
import { waitUntil } from '../helpers/wait.js';

let sshd: TestSshd;
let target: SshTarget;
const states: string[] = [];

beforeAll(async () => {
  sshd = await startSshd();
  sshd.trustHostKey();
  target = await connectSshTarget({
    host: 'target',
    sshConfig: sshd.configPath,
    home: sshd.dir,
    downTimeoutMs: 3000,
    onState: (s) => states.push(s.state),
    connection: { agentSocket: null, backoff: { initialMs: 100, maxMs: 400 } },
  });
});
afterAll(async () => {
  await target?.close();
  await sshd?.stop();
});

const NASTY = [
  '$(touch /tmp/nsa-pwned-1)',
  '`touch /tmp/nsa-pwned-2`',
  `it's "double" and 'single'`,
  'two  spaces\nand a newline\n',
  '$HOME $' + '{PATH} \\ * ? ~ ; | & > <', // split so it is not mistaken for a template
  '',
];

describe('SshTarget', () => {
  it('passes env values and argv literally', async () => {
    for (const [i, value] of NASTY.entries()) {
      const viaEnv = await target.exec(['sh', '-c', 'printf %s "$NSA_VALUE"'], { env: { NSA_VALUE: value } });
      expect(viaEnv, `env #${i}`).toEqual({ stdout: value, stderr: '', code: 0 });
      const viaArgv = await target.exec(['printf', '%s', value]);
      expect(viaArgv.stdout, `argv #${i}`).toBe(value);
    }
    expect(existsSync('/tmp/nsa-pwned-1')).toBe(false);
    expect(existsSync('/tmp/nsa-pwned-2')).toBe(false);
    await expect(target.exec(['true'], { env: { 'BAD NAME': 'x' } })).rejects.toThrow(
      /invalid environment variable/,
    );
  });

  it('runs in a cwd with spaces and reports exit codes and stderr', async () => {
    const dir = join(sshd.dir, 'dir with spaces');
    mkdirSync(dir);
    const r = await target.exec(['sh', '-c', 'pwd; echo oops >&2; exit 7'], { cwd: dir });
    expect(r).toEqual({ stdout: `${dir}\n`, stderr: 'oops\n', code: 7 });
  });

  it('times out a hung command and kills it', async () => {
    const err = await target.exec(['sleep', '31'], { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandTimeoutError);
    await waitUntil(async () => (await target.exec(['pgrep', '-f', 'sleep 31'])).code === 1, {
      what: 'sleep 31 gone',
    });
    // the shell it held was killed with it; the next command gets another
    expect((await target.exec(['echo', 'after'])).stdout).toBe('after\n');
  });

  it('short commands share one login shell; with every shell held, a command takes an exec channel rather than wait', async () => {
    // each command is started by the shell that runs it: one parent for commands one after another
    const parents = new Set<string>();
    for (let i = 0; i < 12; i++) parents.add((await target.exec(['sh', '-c', 'echo $PPID'])).stdout.trim());
    expect(parents.size).toBe(1);
    const loop = await target.exec(['cat', `/proc/${[...parents][0]}/cmdline`]);
    expect(loop.stdout).toContain('@@NSA-READY');
    // three slow commands hold the three shells; a fourth does not queue behind them
    const parent = ['sh', '-c', 'cat /proc/$PPID/cmdline'];
    const order: string[] = [];
    const held = Array.from({ length: 3 }, (_, i) =>
      target.exec(['sh', '-c', 'sleep 15; echo $PPID; cat /proc/$PPID/cmdline']).then((r) => {
        order.push(`held ${i}`);
        return r;
      }),
    );
    const extra = await target.exec(parent);
    order.push('extra');
    expect(extra.code).toBe(0);
    expect(extra.stdout).not.toContain('@@NSA-READY'); // an exec channel of its own
    const results = await Promise.all(held);
    expect(results.every((r) => r.stdout.includes('@@NSA-READY'))).toBe(true);
    expect(new Set(results.map((r) => r.stdout.split('\n')[0])).size).toBe(3); // three shells
    expect(order[0]).toBe('extra');
  }, 60_000);

  it('interacts through a PTY', async () => {
    const pty = await target.spawnPty({
      argv: ['sh', '-c', 'echo hi; read x; echo got $x'],
      cols: 100,
      rows: 30,
    });
    expect(pty.pid).toBeGreaterThan(1);
    let out = '';
    pty.onData((d) => {
      out += d;
    });
    const exited = new Promise<number | null>((r) => pty.onExit((e) => r(e.exitCode)));
    await waitUntil(() => out.includes('hi'), { what: 'hi' });
    expect(out).not.toContain('NSA_DBG_PID');
    pty.resize(120, 40);
    pty.write('abc\r');
    await waitUntil(() => out.includes('got abc'), { what: 'got abc' });
    expect(await exited).toBe(0);
  });

  it('sees the PTY size and resizes it', async () => {
    const pty = await target.spawnPty({
      argv: ['sh', '-c', 'stty size; read x; stty size'],
      cols: 90,
      rows: 25,
    });
    let out = '';
    pty.onData((d) => {
      out += d;
    });
    await waitUntil(() => out.includes('25 90'), { what: 'initial size' });
    pty.resize(132, 43);
    pty.write('\r');
    await waitUntil(() => out.includes('43 132'), { what: 'new size' });
  });

  it('reads, writes atomically, lists and creates parent folders', async () => {
    const dir = join(sshd.dir, 'files', 'nested');
    expect(await target.listDir(dir)).toEqual([]);
    expect(await target.readFile(join(dir, 'missing'))).toBeNull();
    const data = Buffer.from([0, 1, 2, 255, 10, 13]);
    await target.writeFile(join(dir, 'a.bin'), data);
    await target.writeFile(join(dir, 'b.txt'), 'first');
    await target.writeFile(join(dir, 'b.txt'), 'second'); // replaces an existing file
    expect(readFileSync(join(dir, 'a.bin'))).toEqual(data);
    expect((await target.readFile(join(dir, 'b.txt')))?.toString()).toBe('second');
    expect((await target.listDir(dir)).sort()).toEqual(['a.bin', 'b.txt']); // no temp files left
  });

  it('signals, checks liveness and reads /proc status', async () => {
    const r = await target.exec(['sh', '-c', 'sleep 60 >/dev/null 2>&1 & echo $!']);
    const pid = Number(r.stdout.trim());
    expect(await target.isAlive(pid)).toBe(true);
    expect(await target.procStatus(pid)).toMatch(/^Name:\s+sleep$/m);
    await target.signal(pid, 'SIGKILL');
    await waitUntil(async () => !(await target.isAlive(pid)), { what: 'sleep killed' });
    expect(await target.procStatus(999_999_999)).toBeNull();
    await expect(target.signal(999_999_999, 'USR1')).rejects.toThrow(/kill -USR1/);
  });

  it('streams stdout as it arrives and can be killed', async () => {
    const chunks: string[] = [];
    const s = target.stream(['sh', '-c', 'for i in 1 2 3; do echo "tick $i"; sleep 0.05; done'], (c) =>
      chunks.push(c.toString()),
    );
    expect(await s.done).toBe(0);
    expect(chunks.join('')).toBe('tick 1\ntick 2\ntick 3\n');

    const long = target.stream(['sleep', '30'], () => {});
    const started = Date.now();
    await waitUntil(async () => (await target.exec(['pgrep', '-x', 'sleep'])).code === 0, {
      what: 'sleep running',
    });
    long.kill();
    expect(await long.done).toBeNull();
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('rejects instead of hanging while the box is unreachable, then recovers', async () => {
    rmSync(join(sshd.dir, 'files'), { recursive: true, force: true });
    await sshd.stopListener();
    await waitUntil(() => states.includes('down'), { what: 'down state' });
    const started = Date.now();
    const err = await target.exec(['true']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshError);
    expect((err as SshError).kind).toBe('down');
    expect(Date.now() - started).toBeLessThan(6000);
    await expect(target.readFile('/etc/hostname')).rejects.toBeInstanceOf(SshError);
    expect(target.connection.state.attempts).toBeGreaterThan(0);

    await sshd.startListener();
    await waitUntil(() => target.connection.isUp, { timeoutMs: 15_000, what: 'reconnected' });
    expect((await target.exec(['echo', 'back'])).stdout).toBe('back\n');
    expect(states).toContain('reconnecting');
    expect(states[states.length - 1]).toBe('up');
  });
});
