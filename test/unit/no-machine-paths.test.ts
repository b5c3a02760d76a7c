/**
 * Tests and docs must travel with the repository: no tracked file may name a path of the machine
 * it was written on. What counts as "this machine's layout" is worked out from where this checkout
 * lies, not written down (a list here would itself be such a path):
 *
 * - the checkout's own absolute path (and its real path, through symlinks);
 * - the folder that holds the checkout, where sibling checkouts and shared folders live, unless it
 *   is a generic system folder (`/`, `/tmp`, `/home`, ...: those would flag ordinary paths);
 * - the user's home, unless it is `/root`: the GPU boxes the real captures come from run as root,
 *   and those files quote the box's `/root/nsa-vibe/...` paths on purpose.
 *
 * Paths such as `/proc/PID/status`, `/usr/bin/env` or `/tmp/x` in tests are not flagged.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** folders too generic to mean "this machine": a checkout directly inside one says nothing */
const GENERIC = new Set(['/', '/tmp', '/var/tmp', '/home', '/root', '/opt', '/srv', '/mnt', '/usr']);

function layoutRoots(root: string, home: string): string[] {
  const roots = new Set<string>();
  for (const r of new Set([root, realpathSync(root)])) {
    roots.add(r);
    const parent = dirname(r);
    if (!GENERIC.has(parent) && parent !== home) roots.add(parent);
  }
  if (home !== '/root' && home !== '/' && home !== '') roots.add(home);
  return [...roots];
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function offending(roots: string[]): string[] {
  // a root followed by `/`, a quote, a space or the end of the line: `/srv/ab` is not under `/srv/a`
  const re = new RegExp(`(?:${roots.map(escapeRe).join('|')})(?=[/'"\`\\s):]|$)`, 'm');
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT }).toString('utf8').split('\0');
  const hits: string[] = [];
  for (const f of files) {
    const p = join(ROOT, f);
    if (!f || !existsSync(p) || !statSync(p).isFile()) continue; // deleted in the working tree
    const buf = readFileSync(p);
    if (buf.subarray(0, 8192).includes(0)) continue; // binary
    buf
      .toString('utf8')
      .split('\n')
      .forEach((line, i) => {
        if (re.test(line)) hits.push(`${f}:${i + 1}: ${line.trim().slice(0, 160)}`);
      });
  }
  return hits;
}

describe('tracked files name no path of this machine', () => {
  it('finds none of the checkout, the folder around it or the home', () => {
    const roots = layoutRoots(ROOT, homedir());
    expect(roots.length).toBeGreaterThan(0);
    expect(offending(roots)).toEqual([]);
  });

  it('catches the checkout and its siblings, not /proc, /usr, /tmp or the captures’ /root', () => {
    const roots = layoutRoots(ROOT, homedir());
    const re = new RegExp(`(?:${roots.map(escapeRe).join('|')})(?=[/'"\`\\s):]|$)`);
    expect(re.test(`const FIX = '${join(ROOT, 'test', 'fixtures')}';`)).toBe(true);
    if (!GENERIC.has(dirname(ROOT))) expect(re.test(`${join(dirname(ROOT), 'shared', 'x.log')}`)).toBe(true);
    expect(re.test('/proc/1/status /usr/bin/env /tmp/nsa-x /dev/null /root/nsa-vibe/x.py')).toBe(false);
  });
});
