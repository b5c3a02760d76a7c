/**
 * The command shell's wire: the real loop under this machine's `sh` (dash on Debian), fed encoded
 * requests, its replies read back by ReplyReader in chunks of every size.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  encodeRequest,
  ReplyReader,
  SHELL_LOOP,
  type ShellReply,
} from '../../../src/targets/ssh/command-shell.js';
import { shScript } from '../../../src/targets/ssh/sh-quote.js';

/** run scripts through one real loop, one after another; returns the replies and the loop's pid */
async function throughLoop(
  scripts: Array<string | [string, Buffer]>,
  preamble = '',
): Promise<{ replies: ShellReply[]; pid: number }> {
  const child = spawn('sh', ['-c', `${preamble}${SHELL_LOOP}`], { stdio: ['pipe', 'pipe', 'inherit'] });
  const reader = new ReplyReader();
  const replies: ShellReply[] = [];
  let wake = () => {};
  child.stdout.on('data', (b: Buffer) => {
    replies.push(...reader.push(b));
    wake();
  });
  const next = (n: number) =>
    new Promise<void>((resolve) => {
      wake = () => replies.length >= n && resolve();
      wake();
    });
  for (const [i, s] of scripts.entries()) {
    child.stdin.write(typeof s === 'string' ? encodeRequest(i + 1, s) : encodeRequest(i + 1, s[0], s[1]));
    await next(i + 1);
  }
  child.stdin.end();
  await new Promise((r) => child.on('close', r));
  expect(reader.broken).toBeNull();
  return { replies, pid: reader.pid ?? 0 };
}

describe('command shell', () => {
  it('runs each script with its exit code, stdout and stderr apart, bytes exact', async () => {
    const hostile = `$(touch /tmp/nsa-shell-pwned) \`id\` 'sq' "dq"  two\nlines \\ é ✓ \t%b %s`;
    const { replies, pid } = await throughLoop([
      shScript(['printf', '%s', hostile]),
      shScript(['sh', '-c', 'echo out; echo err >&2; exit 7']),
      shScript(['sh', '-c', 'printf %s "$X"'], { env: { X: 'a\\0101b\\n' } }),
      // every byte value, NUL included
      shScript(['sh', '-c', 'i=0; while [ $i -lt 256 ]; do printf "\\\\$(printf %o $i)"; i=$((i+1)); done']),
      shScript(['sh', '-c', 'pwd'], { cwd: '/tmp' }),
      shScript(['sh', '-c', 'kill -TERM $$']),
    ]);
    expect(pid).toBeGreaterThan(0);
    expect(replies.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(replies[0]!.stdout.toString('utf8')).toBe(hostile);
    expect(replies[1]).toMatchObject({ code: 7 });
    expect(replies[1]!.stdout.toString()).toBe('out\n');
    expect(replies[1]!.stderr.toString()).toBe('err\n');
    expect(replies[2]!.stdout.toString()).toBe('a\\0101b\\n');
    expect([...replies[3]!.stdout]).toEqual(Array.from({ length: 256 }, (_, i) => i));
    expect(replies[4]!.stdout.toString()).toBe('/tmp\n');
    expect(replies[5]!.code).toBe(128 + 15);
  });

  it('carries bytes for the stdin of a command, every byte value exact; none is an empty stdin', async () => {
    const all = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
    const { replies } = await throughLoop([
      [shScript(['cat']), all],
      shScript(['wc', '-c']),
      [shScript(['sh', '-c', 'cat > "$1" && cat "$1"', 'sh', '/dev/null']), Buffer.from('x')],
    ]);
    expect(replies[0]!.stdout.equals(all)).toBe(true);
    expect(replies[1]!.stdout.toString().trim()).toBe('0');
  });

  it('a process a command leaves behind writing to its stdout does not change later replies', async () => {
    const { replies } = await throughLoop([
      shScript(['sh', '-c', '(for i in 1 2 3 4 5 6 7 8; do echo stray; sleep 0.05; done) & echo first']),
      ...Array.from({ length: 8 }, (_, i) => shScript(['sh', '-c', `sleep 0.03; echo reply-${i}`])),
    ]);
    expect(replies[0]!.stdout.toString()).toContain('first\n');
    expect(replies.slice(1).map((r) => r.stdout.toString())).toEqual(
      Array.from({ length: 8 }, (_, i) => `reply-${i}\n`),
    );
  });

  // each reply's files are its own (a stray writer cannot reach a later reply), removed at once when
  // large and the small ones every hundred requests: a fork fewer per command, and the box's temp
  // folder does not fill
  it("removes the replies' files: a large one at once, the small ones every hundred requests", async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'nsa-shell-tmp-'));
    try {
      const small = Array.from({ length: 230 }, (_, i) => shScript(['echo', `r${i}`]));
      const { replies } = await throughLoop(
        [
          ...small,
          shScript(['sh', '-c', 'head -c 10000 /dev/zero']),
          shScript(['sh', '-c', 'cd "$TMPDIR"/nsa-dbg-sh.* && ls']),
        ],
        `TMPDIR='${tmp}'; export TMPDIR; `,
      );
      expect(replies.slice(0, 230).map((r) => r.stdout.toString())).toEqual(
        Array.from({ length: 230 }, (_, i) => `r${i}\n`),
      );
      expect(replies[230]!.stdout.length).toBe(10000);
      const left = replies[231]!.stdout.toString().split('\n').filter(Boolean);
      // requests 201–230 and this one's own stdout and stderr; nothing of 1–200, nor of the large one
      expect(left.filter((f) => /^[oe]\.\d+$/.test(f)).length).toBeLessThanOrEqual(2 * 32);
      expect(left).not.toContain('o.100');
      expect(left).not.toContain('o.231');
      expect(left).toContain('o.230');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('skips what a chatty login shell prints before the ready line', async () => {
    const { replies } = await throughLoop(
      [shScript(['echo', 'ok'])],
      'echo "Welcome to the box"; echo "@@NSA"; ',
    );
    expect(replies[0]!.stdout.toString()).toBe('ok\n');
  });
});

describe('ReplyReader', () => {
  const stream = Buffer.concat([
    Buffer.from('motd @@NSA-READ'),
    Buffer.from('Y 4242\n@@NSA-S 1\n@@NSA-R 1 0 3 2\nabcde@@NSA-S 2\n@@NSA-R 2 1   0   4\nfail'),
  ]);

  it('gives the same replies whatever the chunking', () => {
    for (const size of [1, 2, 3, 7, stream.length]) {
      const reader = new ReplyReader();
      const got: ShellReply[] = [];
      for (let i = 0; i < stream.length; i += size) got.push(...reader.push(stream.subarray(i, i + size)));
      expect(reader.pid, `chunk ${size}`).toBe(4242);
      expect(reader.started).toBe(2);
      expect(got.map((r) => [r.id, r.code, r.stdout.toString(), r.stderr.toString()])).toEqual([
        [1, 0, 'abc', 'de'],
        [2, 1, '', 'fail'],
      ]);
    }
  });

  it('a large reply in many pieces comes out whole and exact', () => {
    const big = Buffer.alloc(4 * 1024 * 1024 + 7, 0);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
    const stream = Buffer.concat([
      Buffer.from(`@@NSA-READY 9\n@@NSA-S 1\n@@NSA-R 1 0 ${big.length} 3\n`),
      big,
      Buffer.from('err@@NSA-S 2\n@@NSA-R 2 0 2 0\nok'),
    ]);
    const reader = new ReplyReader();
    const got: ShellReply[] = [];
    for (let i = 0; i < stream.length; i += 32 * 1024)
      got.push(...reader.push(stream.subarray(i, i + 32 * 1024)));
    expect(got).toHaveLength(2);
    expect(got[0]!.stdout.equals(big)).toBe(true);
    expect(got[0]!.stderr.toString()).toBe('err');
    expect(got[1]!.stdout.toString()).toBe('ok');
  });

  it('says so when the stream is not a command shell', () => {
    const reader = new ReplyReader();
    reader.push(Buffer.from('@@NSA-READY 7\nsomething else\n'));
    expect(reader.broken).toMatch(/unexpected reply/);
  });

  it('encodes a request as one line without spaces', () => {
    const line = encodeRequest(3, 'echo "a b"\nexit 0');
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).toMatch(/^3 [^\s]+$/);
  });
});
