/**
 * Expected failures through the real binary: one or two plain lines on stderr, never a stack trace,
 * and the documented exit code (2 usage/config, 3 connection or host key).
 */

import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, type CliResult, runCli } from '../helpers/cli.js';
import { readOnlyAvailable, runCliReadOnly } from '../helpers/read-only.js';
import { makeUserKey, startSshd, type TestSshd } from '../helpers/sshd.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');

let sshd: TestSshd;
let home: string;
beforeAll(async () => {
  sshd = await startSshd();
  sshd.trustHostKey();
  home = mkdtempSync(join(tmpdir(), 'nsa-home-'));
  const stranger = makeUserKey(sshd.dir, 'not-authorized');
  sshd.addConfig(
    [
      'Host wrong-key',
      '  HostName 127.0.0.1',
      `  Port ${sshd.port}`,
      `  User ${sshd.user}`,
      `  IdentityFile ${stranger}`,
      '  IdentitiesOnly yes',
      `  UserKnownHostsFile ${sshd.knownHostsPath}`,
    ].join('\n'),
  );
});
afterAll(async () => {
  await sshd?.stop();
});

/** a port nothing listens on: bound, then released */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function expectPlain(r: CliResult, code: number, message: RegExp): void {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack frames
  expect(r.stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
}

const cli = (args: string[], cwd?: string) =>
  runCli(args, { env: { NSA_DBG_HOME: home, SSH_AUTH_SOCK: '' }, ...(cwd ? { cwd } : {}) });

describe('expected failures', () => {
  it('no route to the box: exit 3, one line', async () => {
    const port = await closedPort();
    expectPlain(await cli(['attach', '--host', `nobody@127.0.0.1:${port}`]), 3, /cannot connect/);
  });

  it('authentication refused: exit 3, names the key tried', async () => {
    const r = await cli(['attach', '--host', 'wrong-key', '--ssh-config', sshd.configPath]);
    expectPlain(r, 3, /authentication failed.*not-authorized/);
  });

  it('a lane file that is not valid YAML: exit 2, names the file', async () => {
    const project = mkdtempSync(join(tmpdir(), 'nsa-proj-'));
    mkdirSync(join(project, '.nsa-dbg', 'presets'), { recursive: true });
    writeFileSync(join(project, '.nsa-dbg', 'presets', 'broken.yaml'), 'name: broken\nenv: [1, 2\n');
    const r = await cli(['run', '--headless', '--json', '--lane', 'broken', '--', 'true'], project);
    expectPlain(r, 2, /broken\.yaml/);
    // NSA_DBG_DEBUG=1 adds where it came from, for a bug report; the exit code stays
    const debug = await runCli(['run', '--headless', '--json', '--lane', 'broken', '--', 'true'], {
      env: { NSA_DBG_HOME: home, NSA_DBG_DEBUG: '1' },
      cwd: project,
    });
    expect(debug.code).toBe(2);
    expect(debug.stderr).toMatch(/broken\.yaml/);
    expect(debug.stderr).toMatch(/\n\s+at .*\.js:\d+/);
  });

  it('--hosts used wrongly: exit 2 before any host is reached, saying what to give', async () => {
    const run = (more: string[]) =>
      cli(['run', '--headless', '--json', '--lane', 'ddp-gloo', ...more, '--', 'true']);
    expectPlain(await run(['--hosts', 'gpu1']), 2, /--hosts takes two or more hosts/);
    expectPlain(await run(['--hosts', 'gpu1,gpu1']), 2, /gpu1 is given twice/);
    expectPlain(await run(['--hosts', 'gpu1,gpu2', '--slurm']), 2, /either --hosts or --slurm/);
    expectPlain(await run(['--hosts', 'gpu1,gpu2', '--host', 'gpu1']), 2, /either --host .* or --hosts/);
    expectPlain(await run(['--rdzv-host', '10.0.0.1']), 2, /--rdzv-host needs --hosts/);
    expectPlain(await run(['--rdzv-port', '29400']), 2, /--rdzv-port needs --slurm or --hosts/);
    // a lane that does not start torchrun: refused before connecting (these hosts do not exist)
    const r = await cli([
      'run',
      '--headless',
      '--json',
      '--lane',
      'baseline',
      '--hosts',
      'nohost-1,nohost-2',
      '--',
      'true',
    ]);
    expectPlain(r, 2, /lane baseline has no launcher/);
  });

  it('attach to a --hosts cell (command.json of an older nsa-dbg) reconnects to its hosts: one unreachable is exit 3', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'nsa-cells-'));
    const id = '20261122-230000-ddp-beef';
    mkdirSync(join(runs, id));
    const entry = (alias: string) => ({ alias, runsRoot: '/r', cwd: '/' });
    // the shape written before launch kinds: torchrun settings carrying the hosts
    const hosts = { hosts: [entry('target'), entry('nohost-1')], rdzvEndpoint: 'a:29500', launcherWords: 1 };
    const spec = {
      runId: id,
      runDir: join(runs, id),
      argv: ['torchrun'],
      env: {},
      cwd: runs,
      lane: 'ddp-gloo',
    };
    writeFileSync(
      join(runs, id, 'command.json'),
      JSON.stringify({
        ...spec,
        outDir: spec.runDir,
        createdAt: '',
        launcher: { kind: 'torchrun', nprocPerNode: 2, hosts },
      }),
    );
    const listed = await cli(['attach', '--runs-dir', runs, '--json']);
    expect(JSON.parse(listed.stdout)[0]).toMatchObject({ runId: id, launcher: 'hosts', status: 'starting' });
    // the first host answers, the second does not exist: the attach fails with the host named
    const r = await cli(['attach', id, '--runs-dir', runs, '--ssh-config', sshd.configPath]);
    expectPlain(r, 3, /nohost-1/);
  });

  it('attach to a run that is not on the box: exit 2 at once, though the link is open', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'nsa-remote-runs-'));
    const r = await cli([
      'attach',
      '--host',
      'target',
      '--ssh-config',
      sshd.configPath,
      '--runs-dir',
      runs,
      'nope',
    ]);
    expectPlain(r, 2, /no run matches "nope"/);
  });
});

describe('numbers are checked before anything runs', () => {
  it.each([
    [
      ['run', '--headless', '--json', '--lane', 'baseline', '--steps', '-3', '--', 'true'],
      /--steps must be a whole number ≥ 1, not "-3"/,
    ],
    [
      ['run', '--headless', '--json', '--lane', 'baseline', '--steps', '0', '--', 'true'],
      /--steps must be a whole number ≥ 1, not "0"/,
    ],
    [
      ['run', '--headless', '--json', '--lane', 'baseline', '--steps', 'abc', '--', 'true'],
      /--steps .* not "abc"/,
    ],
    [
      ['run', '--headless', '--json', '--lane', 'baseline', '--steps=2.5', '--', 'true'],
      /--steps .* not "2.5"/,
    ],
    [
      ['run', '--headless', '--lane', 'baseline', '--steps', '2', '--steps', '3', '--', 'true'],
      /give --steps once/,
    ],
    [['run', '--headless', '--demo', '--lane', 'baseline', '--step-ms', '-5'], /--step-ms must be/],
    [['demo', '--headless', '--ranks', '0'], /--ranks must be a whole number ≥ 1, not "0"/],
    [
      ['run', '--slurm', '--lane', 'ddp-gloo', '--rdzv-port', '70000', '--', 'true'],
      /--rdzv-port must be a whole number from 1 to 65535/,
    ],
    [['bisect', '--good', 'a', '--bad', 'b', '--budget', '0'], /--budget must be/],
    [['bisect', '--good', 'a', '--bad', 'b', '--repeat', 'x'], /--repeat must be .* not "x"/],
    [['report', 'nb.json', '--rev', '1.5'], /--rev must be/],
    [['--steps', 'NaN'], /--steps must be/],
  ])('%j: exit 2, one line, nothing run', async (args, message) => {
    const where = mkdtempSync(join(tmpdir(), 'nsa-num-'));
    const r = await runCli(args, { env: { NSA_DBG_HOME: where }, cwd: where });
    expectPlain(r, 2, message);
    // refused before any run dir or notebook was made
    expect(readdirSync(where)).toEqual([]);
  });

  it('a usage error is one plain line, not the whole help', async () => {
    expectPlain(await cli(['run', '--headless', '--', 'true']), 2, /Missing required argument: lane/);
    expectPlain(await cli(['lanes', '--bogus']), 2, /Unknown argument/);
  });
});

/** a project whose .nsa-dbg/presets holds one broken lane file (and one good override) */
function projectWithBrokenLane(): string {
  const project = mkdtempSync(join(tmpdir(), 'nsa-proj-'));
  mkdirSync(join(project, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(
    join(project, '.nsa-dbg', 'presets', 'x.yaml'),
    'name: x\ndescription: broken\nenv: {A: [1, 2\n',
  );
  writeFileSync(join(project, '.nsa-dbg', 'presets', 'fp16.yaml'), 'name: fp16\ndescription: mine\n');
  return project;
}

const STEP_LINE = 'print("step 0001 | loss 5.7000 | lr 1.00e-04 | toks/s 80")';

describe('a broken lane file breaks only itself', () => {
  it('lanes: exit 0, every other lane, where each came from, the broken file with its position', async () => {
    const project = projectWithBrokenLane();
    const r = await cli(['lanes'], project);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^batched-prefill /m);
    expect(r.stdout).toMatch(/from \S+\/presets\/batched-prefill\.yaml/);
    expect(r.stdout).toMatch(/from \S+\.nsa-dbg\/presets\/fp16\.yaml \(overrides \S+\/presets\/fp16\.yaml\)/);
    expect(r.stdout).toMatch(
      /not loaded[^\n]*\n\s+\S+x\.yaml:4:1: field "env": Flow sequence .* end with a \]\n/,
    );
    expect(r.stdout).not.toMatch(/at line|column|\n\s+at /);
    const json = JSON.parse((await cli(['lanes', '--json'], project)).stdout);
    expect(json.broken).toEqual([expect.objectContaining({ names: ['x'], field: 'env', line: 4, col: 1 })]);
    expect(json.lanes.find((l: { name: string }) => l.name === 'fp16').overrides).toHaveLength(1);
  });

  it('a good lane runs, the broken file said once on stderr; the broken lane itself is exit 2', async () => {
    const project = projectWithBrokenLane();
    const good = await cli(
      ['run', '--headless', '--lane', 'batched-prefill', '--steps', '1', '--', 'python3', '-c', STEP_LINE],
      project,
    );
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/^GO lane batched-prefill/);
    expect(good.stderr.match(/x\.yaml/g)).toHaveLength(1);
    expect(good.stderr).toMatch(/lane file skipped: \S+x\.yaml:4:1: field "env"/);
    const bad = await cli(['run', '--headless', '--json', '--lane', 'x', '--', 'true'], project);
    expectPlain(bad, 2, /x\.yaml:4:1: field "env": Flow sequence/);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).not.toMatch(/at line \d+, column \d+:?$/m);
  });
});

/** `nsa-dbg ARGS | head …` as a shell runs it: nsa-dbg's own exit status and stderr */
function pipedToHead(args: string[], head: string[], cwd: string): Promise<CliResult> {
  // bash's PIPESTATUS: the status of nsa-dbg itself, not of head
  const status = '"$' + '{PIPESTATUS[0]}"';
  const script = `node "$0" "$@" | head ${head.join(' ')} >/dev/null; exit ${status}`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script, BIN, ...args], {
      cwd,
      env: { ...process.env, NSA_DBG_HOME: home },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: '', stderr }));
  });
}

/** the report fixture's notebook with its cells repeated: a report well past a pipe's 64 KiB */
function bigNotebook(dir: string): string {
  const nb = JSON.parse(readFileSync(join(FIXTURES, 'report', 'notebook.json'), 'utf8'));
  const cells = Array.from({ length: 40 }, (_, i) => ({ ...nb.cells[i % nb.cells.length], id: `c${i + 1}` }));
  const file = join(dir, 'big.json');
  writeFileSync(file, JSON.stringify({ ...nb, cells, nextId: cells.length + 1, bisections: [] }));
  return file;
}

describe('pipes and files', () => {
  it('report -o - writes the report to stdout and no file at all', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-report-'));
    const nb = join(dir, 'nb.json');
    copyFileSync(join(FIXTURES, 'report', 'notebook.json'), nb);
    const r = await cli(['report', nb, '-o', '-'], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^# \d{4}-\d{2}-\d{2} Test Engineer Report - .* v1$/m);
    expect(r.stdout).not.toMatch(/\.svg\)/);
    expect(r.stderr).toBe('');
    expect(readdirSync(dir)).toEqual(['nb.json']);
  });

  it('report -o - | head -c 100 and attach | head -1 end quietly, exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-pipe-'));
    const report = await pipedToHead(['report', bigNotebook(dir), '-o', '-'], ['-c', '100'], dir);
    expect(report.stderr).toBe('');
    expect(report.code).toBe(0);
    // more runs than a pipe holds: attach's listing is still being written when head leaves
    const runs = join(dir, 'runs');
    for (let i = 0; i < 400; i++) {
      const id = `20261122-2300${String(i).padStart(3, '0')}-baseline-beef`;
      mkdirSync(join(runs, id), { recursive: true });
      const argv = ['python3', '-u', 'train.py', ...Array.from({ length: 30 }, (_, k) => `--opt${k}=v`)];
      writeFileSync(join(runs, id, 'command.json'), JSON.stringify({ runId: id, lane: 'baseline', argv }));
      writeFileSync(join(runs, id, 'exit_code'), '0\n');
    }
    const attach = await pipedToHead(['attach', '--runs-dir', runs], ['-1'], dir);
    expect(attach.stderr).toBe('');
    expect(attach.code).toBe(0);
  });

  it('a notebook path that is a folder: one line, exit 2, no lock left beside it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-fs-'));
    mkdirSync(join(dir, 'folder.json'));
    // without a terminal (these tests have none) the dashboard says so first, before the notebook
    // is touched; the headless form reads the notebook
    expectPlain(
      await cli(['--notebook', 'folder.json'], dir),
      2,
      /the dashboard needs a terminal; use --headless/,
    );
    const headless = ['run', '--headless', '--notebook', 'folder.json', '--lane', 'baseline', '--', 'true'];
    expectPlain(await cli(headless, dir), 2, /folder\.json: it is a directory/);
    expect(readdirSync(dir)).toEqual(['folder.json']);
  });

  it('a read-only notebook folder and --runs-dir on read-only storage: one line naming the path, exit 2', async () => {
    expect(readOnlyAvailable(), 'unshare -rm and tmpfs are needed for read-only storage').toBe(true);
    const seed = mkdtempSync(join(tmpdir(), 'nsa-seed-'));
    copyFileSync(join(FIXTURES, 'report', 'notebook.json'), join(seed, 'nb.json'));
    const ro = mkdtempSync(join(tmpdir(), 'nsa-ro-'));
    const env = { NSA_DBG_HOME: home };
    // no terminal here: the dashboard refuses before the notebook's lock is tried (headless below)
    const tui = await runCliReadOnly(ro, ['--notebook', join(ro, 'nb.json')], { seed, env });
    expectPlain(tui, 2, /the dashboard needs a terminal; use --headless/);
    const run = ['run', '--headless', '--json', '--lane', 'baseline', '--steps', '1'];
    const cell = await runCliReadOnly(ro, [...run, '--notebook', join(ro, 'nb.json'), '--', 'true'], {
      seed,
      env,
    });
    expectPlain(cell, 2, /nb\.json\.lock: read-only file system \(EROFS\)/);
    const runsDir = await runCliReadOnly(ro, [...run, '--runs-dir', join(ro, 'runs'), '--', 'true'], { env });
    expectPlain(
      runsDir,
      2,
      new RegExp(`cannot create the folder ${ro}/runs: read-only file system \\(EROFS\\)`),
    );
  });
});

describe('a trainer that is not there is said, not run', () => {
  it('command not found: exit 2, one line, no run dir', async () => {
    const where = mkdtempSync(join(tmpdir(), 'nsa-nocmd-'));
    const env = { env: { NSA_DBG_HOME: where }, cwd: where };
    const headless = ['run', '--headless', '--json', '--lane', 'baseline', '--steps', '2'];
    expectPlain(
      await runCli([...headless, '--', 'nosuchcmd_xyz', '--x'], env),
      2,
      /^nsa-dbg: command not found: nosuchcmd_xyz$/m,
    );
    // the dashboard too refuses before it opens (with no terminal, for that first)
    expectPlain(
      await runCli(['run', '--lane', 'baseline', '--', 'nosuchcmd_xyz'], env),
      2,
      /the dashboard needs a terminal; use --headless/,
    );
    // a lane's PATH is the one looked in
    const bin = join(where, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'mytrainer'), `#!/bin/sh\nexec python3 -c '${STEP_LINE}'\n`, { mode: 0o755 });
    const lanes = join(where, '.nsa-dbg', 'presets');
    mkdirSync(lanes, { recursive: true });
    writeFileSync(join(lanes, 'pathy.yaml'), `name: pathy\nenv:\n  PATH: "${bin}:/usr/bin:/bin"\n`);
    const ok = await runCli(['run', '--headless', '--lane', 'pathy', '--steps', '1', '--', 'mytrainer'], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readdirSync(join(where, 'runs'))).toHaveLength(1);
  });

  it("the lanes' default trainer missing from this folder: said, with what to do", async () => {
    const where = mkdtempSync(join(tmpdir(), 'nsa-nocmd-'));
    const r = await runCli(['run', '--headless', '--lane', 'baseline'], {
      env: { NSA_DBG_HOME: where },
      cwd: where,
    });
    expectPlain(
      r,
      2,
      /no such trainer script: scripts\/train_showcase\.py \(in \S+\); it is the lanes' default trainer .*give yours after --/,
    );
    expect(readdirSync(where)).toEqual([]);
  });
});
