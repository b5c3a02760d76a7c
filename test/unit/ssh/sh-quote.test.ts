import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shCommand, shQuote, shQuotePath, shScript } from '../../../src/targets/ssh/sh-quote.js';

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
});
