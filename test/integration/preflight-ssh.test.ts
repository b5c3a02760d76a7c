// `nsa-dbg check` over real sshd's on this machine: the probe is copied beside the box's runs and
// run there; `--hosts` checks each host and the verdict is the worst of them.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckRun } from '../../src/preflight/format.js';
import { runCli } from '../helpers/cli.js';
import { startTwoHosts, type TwoHosts } from '../helpers/two-hosts.js';

let hosts: TwoHosts;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nsa-preflight-ssh-'));
  hosts = await startTwoHosts(dir);
});
afterAll(async () => {
  await hosts?.stop();
});

describe('nsa-dbg check on boxes over SSH', () => {
  it('--host with --demo: the faulty demo box, probed on the box, is NO-GO', async () => {
    const runs = join(dir, 'runs-a');
    const r = await runCli(
      [
        'check',
        '--host',
        'node-a',
        '--ssh-config',
        hosts.sshConfig,
        '--runs-dir',
        runs,
        '--demo',
        '--lane',
        'demo-faulty-box',
        '--json',
      ],
      { timeoutMs: 90_000 },
    );
    expect(r.code, r.stderr).toBe(1);
    const run = JSON.parse(r.stdout) as CheckRun;
    expect(run.boxes).toHaveLength(1);
    const ids = run.boxes[0]!.checks.filter((c) => c.status === 'fail').map((c) => c.id);
    expect(ids).toEqual(expect.arrayContaining(['gpu.clocks', 'gpu.ecc', 'gpu.processes', 'host.xid']));
    expect(existsSync(join(runs, '.preflight', 'probe.py'))).toBe(true);
    expect(existsSync(join(runs, '.preflight', 'nvidia_smi_qlog.py'))).toBe(true);
  });

  it('--hosts: one box per host, reasons named by host', async () => {
    const r = await runCli(
      [
        'check',
        '--hosts',
        'node-a,node-b',
        '--ssh-config',
        hosts.sshConfig,
        '--runs-dir',
        join(dir, 'runs-b'),
        '--json',
      ],
      { timeoutMs: 90_000 },
    );
    const run = JSON.parse(r.stdout) as CheckRun;
    expect(run.boxes).toHaveLength(2);
    expect(r.code).toBe(run.go ? 0 : 1);
    // both hosts are this machine: the same checks, each box judged on its own
    expect(run.boxes[0]!.checks.map((c) => c.id)).toEqual(run.boxes[1]!.checks.map((c) => c.id));
    expect(run.boxes.map((b) => b.host.split(' ')[0])).toEqual(['node-a', 'node-b']);
    expect(run.reasons.every((l) => /^node-[ab] \(/.test(l))).toBe(true);
  });
});
