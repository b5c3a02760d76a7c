/**
 * One GO rule: a trainer that prints nothing and exits 0 was a green `PASS: 0 steps` in the
 * dashboard and `go: false`, exit 1 headless. The dashboard's banner now says the lane's GO/NO-GO,
 * the same rule headless, the notebook and the report use.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../helpers/cli.js';
import { TmuxSession } from '../helpers/tmux.js';

let tmux: TmuxSession | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
});

describe('a trainer that prints nothing and exits 0, lane of 5 steps', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nsa-go-rule-'));
  mkdirSync(join(dir, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(join(dir, '.nsa-dbg', 'presets', 't-quiet.yaml'), 'name: t-quiet\nsteps: 5\nstepsFlag: ""\n');
  const command = ['/usr/bin/python3', '-c', 'print("hello")'];

  it('headless: NO-GO, exit 1', async () => {
    const r = await runCli(
      [
        'run',
        '--headless',
        '--json',
        '--lane',
        't-quiet',
        '--runs-dir',
        join(dir, 'runs-h'),
        '--',
        ...command,
      ],
      {
        cwd: dir,
        env: { NSA_DBG_HOME: join(dir, 'home') },
      },
    );
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      verdict: 'pass',
      go: false,
      reasons: ['reached step 0 of 5'],
    });
  });

  it('the dashboard in real tmux: NO-GO with the same reason, not a green PASS', async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    const t = new TmuxSession('go-rule', 160, 30);
    tmux = t;
    t.start(
      `cd ${dir} && ${BIN} run --lane t-quiet --runs-dir ${join(dir, 'runs-t')} -- ${command[0]} -c 'print("hello")'`,
      {
        NSA_DBG_HOME: join(dir, 'home'),
      },
    );
    const screen = await t.waitFor((s) => /NO-GO · PASS/.test(s), 'the NO-GO banner', 40_000);
    expect(screen).toContain('reached step 0 of 5');
    expect(screen).not.toMatch(/(?<!NO-)GO · PASS/);
  });
});
