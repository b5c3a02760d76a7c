import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shCommand, shQuote, shQuotePath, shScript } from '../../../src/targets/ssh/sh-quote.js';
import { shInline } from '../../../src/util/sh-quote.js';

const NASTY = ['plain', '', "it's", '$(touch /tmp/nsa-x)', '`id`', 'a b\nc', '"dq" \\ $HOME *', '-n'];

describe('remote command lines', () => {
  it('quotes words so sh sees them literally', () => {
    for (const v of NASTY) {
      expect(execFileSync('sh', ['-c', `printf %s ${shQuote(v)}`]).toString()).toBe(v);
    }
  });

  it('keeps ~/ expandable in paths', () => {
    expect(shQuotePath('~/.nsa-dbg/runs/a b')).toBe("~/'.nsa-dbg/runs/a b'");
    expect(shQuotePath('/abs/x y')).toBe("'/abs/x y'");
    expect(
      execFileSync('sh', ['-c', `printf %s ${shQuotePath('~/x')}`], { env: { HOME: '/h' } }).toString(),
    ).toBe('/h/x');
  });

  it('builds a sh -c command with exports and cwd, as the login shell would run it', () => {
    const env = Object.fromEntries(NASTY.map((v, i) => [`V${i}`, v]));
    const argv = ['sh', '-c', 'for i in 0 1 2 3 4 5 6 7; do eval "printf \'%s|\' \\"\\$V$i\\""; done; pwd'];
    const cmd = shCommand(argv, { env, cwd: '/tmp' });
    const out = execFileSync('bash', ['-c', cmd]).toString();
    expect(out).toBe(`${NASTY.map((v) => `${v}|`).join('')}/tmp\n`);
    expect(() => shScript(['x'], { env: { 'A-B': '1' } })).toThrow(/invalid environment variable/);
    expect(() => shScript([])).toThrow(/empty argv/);
  });

  it('prints the pid line first when asked', () => {
    const out = execFileSync('sh', ['-c', shScript(['echo', 'ok'], { printPid: 'stdout' })]).toString();
    expect(out).toMatch(/^NSA_DBG_PID=\d+\nok\n$/);
  });

  // a command shell's command: `sh -c SCRIPT NAME ARGS…` runs as SCRIPT in the shell that runs the
  // command (no second sh); the output, the exit status and the process are what they were
  it('shInline: a sh -c argv runs in the same shell with the same words and status; others are exec', () => {
    const run = (script: string) => {
      try {
        return { out: execFileSync('sh', ['-c', script]).toString(), code: 0 };
      } catch (e) {
        const err = e as { stdout: Buffer; status: number | null; signal: string | null };
        return { out: err.stdout.toString(), code: err.status ?? `${err.signal}` };
      }
    };
    const cases: string[][] = [
      ['sh', '-c', 'printf "%s|" "$#" "$@"', 'sh', ...NASTY],
      ['sh', '-c', 'printf "%s|" "$#"'],
      ['sh', '-c', 'echo $1; exit 7', 'sh', 'seven'],
      ['printf', '%s|', ...NASTY],
    ];
    for (const argv of cases) expect(run(shInline(argv)), argv.join(' ')).toEqual(run(shJoinForTest(argv)));
    expect(shInline(['sh', '-c', 'true', 'sh', 'a'])).not.toMatch(/^exec /);
    expect(shInline(['printf', 'x'])).toMatch(/^exec /);
    // `$$` is the process running the command: a script that signals itself ends it as before
    expect(run(shInline(['sh', '-c', 'kill -TERM $$; echo survived']))).toEqual({ out: '', code: 'SIGTERM' });
  });
});

/** the argv run as it was before: its own process, every word quoted */
const shJoinForTest = (argv: string[]) => argv.map(shQuote).join(' ');
