/**
 * The package as users get it: `npm pack` of the built tree, installed into an empty prefix
 * (`npm install -g --prefix`) and into an empty project (for `npx nsa-dbg`), then run from a folder
 * outside the repository with a fresh HOME, so nothing of the checkout can be picked up by accident.
 * Dependencies come from the npm cache when it has them (`--prefer-offline`); `--ignore-scripts`
 * also shows that installing needs no compiler.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const NPM_FLAGS = ['--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'];

let work: string;
let tarball: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'nsa-pack-'));
  // dist/ is what `npm test` just built; `prepare` would only build it again
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', work], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  const [name] = readdirSync(work).filter((n) => n.endsWith('.tgz'));
  tarball = join(work, name!);
}, 120_000);

/** a user's shell: an empty HOME, a folder that is not the checkout */
function asUser(cmd: string, args: string[], cwd: string) {
  const home = mkdtempSync(join(tmpdir(), 'nsa-user-'));
  const r = spawnSync(cmd, args, {
    cwd,
    // without the npm_* variables that `npx vitest` passes down: a user's shell has none
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k))),
      HOME: home,
      NSA_DBG_HOME: join(home, '.nsa-dbg'),
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function expectDemoPasses(r: { code: number | null; stdout: string; stderr: string }): void {
  expect(r.stderr).toBe('');
  expect(r.code, r.stdout).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'pass', stepsReached: 3, go: true });
}

const DEMO = ['demo', '--headless', '--json', '--lane', 'batched-prefill', '--steps', '3', '--step-ms', '50'];

describe('the packed package', () => {
  it('installs with npm install -g into an empty prefix; --help and the demo work from there', () => {
    const prefix = join(work, 'prefix');
    execFileSync('npm', ['install', '-g', '--prefix', prefix, ...NPM_FLAGS, tarball], { stdio: 'ignore' });
    const bin = join(prefix, 'bin', 'nsa-dbg');
    const elsewhere = mkdtempSync(join(tmpdir(), 'nsa-cwd-'));
    const help = asUser(bin, ['--help'], elsewhere);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/nsa-dbg demo/);
    expectDemoPasses(asUser(bin, DEMO, elsewhere));
    // the bundled lanes ship too
    expect(asUser(bin, ['lanes'], elsewhere).stdout).toMatch(/batched-prefill/);
    // the installed program runs node with its young-generation cap and old-generation growth
    // (bin/nsa-dbg's second line)
    const log = join(elsewhere, 'debug.log');
    const prev = process.env.NSA_DBG_LOG;
    process.env.NSA_DBG_LOG = log;
    try {
      expect(asUser(bin, ['lanes'], elsewhere).code).toBe(0);
    } finally {
      if (prev === undefined) delete process.env.NSA_DBG_LOG;
      else process.env.NSA_DBG_LOG = prev;
    }
    expect(readFileSync(log, 'utf8')).toMatch(
      /nsa-dbg lanes \(node v\d+\S* --max-semi-space-size=4 --heap-growing-percent=150\)/,
    );
  }, 120_000);

  it('runs as `npx nsa-dbg` in a project that depends on it', () => {
    const project = join(work, 'project');
    mkdirSync(project);
    execFileSync('npm', ['init', '-y'], { cwd: project, stdio: 'ignore' });
    execFileSync('npm', ['install', ...NPM_FLAGS, tarball], { cwd: project, stdio: 'ignore' });
    expectDemoPasses(asUser('npx', ['--no-update-notifier', '--no-install', 'nsa-dbg', ...DEMO], project));
  }, 120_000);
});
