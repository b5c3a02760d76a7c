/**
 * The box check as a notebook cell on a box over real OpenSSH (`--host`): the notebook offers the
 * check for the box it has not seen, the key checks it over the notebook's own connection (no second
 * login under the view), and the cell records the box, its checks and the NO-GO of the demo's faulty
 * box; `nsa-dbg report` names the box in its platform section.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keyOf, newBoxOffer } from '../../src/notebook/keymap.js';
import { readNotebook } from '../../src/notebook/store.js';
import { BIN, runCli } from '../helpers/cli.js';
import { startSshd, type TestSshd } from '../helpers/sshd.js';
import { TmuxSession } from '../helpers/tmux.js';

const dir = mkdtempSync(join(tmpdir(), 'nsa-e2e-nbcheck-host-'));
let tmux: TmuxSession | null = null;
let sshd: TestSshd | null = null;
afterAll(async () => {
  tmux?.kill();
  await sshd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the box check as a notebook cell, on a box over OpenSSH', () => {
  it('offered for the new box → checked over the notebook’s connection → NO-GO cell of that box → in the report', {
    timeout: 180_000,
  }, async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    sshd = await startSshd();
    sshd.trustHostKey();
    const env = { NSA_DBG_HOME: join(dir, 'home') };
    const host = `--host target --ssh-config ${sshd.configPath} --runs-dir ${join(dir, 'remote')}`;
    tmux = new TmuxSession('nbcheckhost', 160, 40);
    tmux.start(`cd ${dir} && node ${BIN} --notebook nb.json ${host} --demo`, env);
    const t = tmux;
    const header = await t.waitFor(
      (s) => /nsa-dbg notebook/.test(s) && /new box \S+@target/.test(s),
      'the offer',
    );
    const label = /new box (\S+@target):/.exec(header)![1]!;
    expect(header).toContain(newBoxOffer(label));

    t.key(keyOf('check'));
    await t.waitFor((s) => s.includes(`check ${label} for lane`), 'the lane picker, for a check');
    t.type('faulty');
    await t.waitFor((s) => s.includes('filter: faulty_'), 'filtered picker');
    t.key('Enter');
    await t.waitFor(
      (s) =>
        new RegExp(
          `c1\\s+NO-GO\\s+demo-faulty-box\\s+box check of ${label.replace('.', '\\.')}: \\d+ failed`,
        ).test(s) && !s.includes(newBoxOffer(label)),
      'c1 the box check of the remote box, NO-GO, the offer gone',
      120_000,
    );
    t.key('q');
    await t.waitFor((s) => s.includes('[app exited'), 'exit', 30_000);

    const nb = readNotebook(join(dir, 'nb.json'));
    expect(nb.cells).toHaveLength(1);
    const c1 = nb.cells[0]!;
    expect(c1).toMatchObject({ kind: 'check', target: label, go: false, verdict: 'NO-GO' });
    const box = c1.check!.boxes[0]!;
    expect(box.host).toContain('target');
    expect(box.checks.find((k) => k.id === 'gpu.clocks')?.status).toBe('fail');
    // the probe ran on the box, beside its runs, not in this machine's home
    expect(readFileSync(join(dir, 'nb.json'), 'utf8')).not.toContain(join(dir, 'home', '.preflight'));

    const r = await runCli(['report', join(dir, 'nb.json')], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    const md = readFileSync(join(dir, 'nb.report.md'), 'utf8');
    expect(md).toMatch(new RegExp(`\\*\\*Box check\\*\\* \`${label}\`: \\*\\*NO-GO\\*\\*`));
  });
});
