/**
 * Expected failures through the real binary: one or two plain lines on stderr, never a stack trace,
 * and the documented exit code (2 usage/config, 3 connection or host key).
 */

import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../helpers/cli.js';
import { makeUserKey, startSshd, type TestSshd } from '../helpers/sshd.js';

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
