/**
 * The evidence mirror over SSH while the link is cut again and again: a writer appends numbered
 * lines to remote files, the sshd session processes are killed 3 times mid-stream, and the local
 * copy must end byte-identical with every line exactly once. A second mirror process resumes from
 * the saved state without duplicating.
 */

import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvidenceMirror, MIRROR_STATE_FILE } from '../../src/runs/mirror.js';
import { connectSshTarget, type SshTarget } from '../../src/targets/ssh/index.js';
import { startSshd, type TestSshd } from '../helpers/sshd.js';
import { waitUntil } from '../helpers/wait.js';

let sshd: TestSshd;
let target: SshTarget;
let ups = 0;

beforeAll(async () => {
  sshd = await startSshd();
  sshd.trustHostKey();
  target = await connectSshTarget({
    host: 'target',
    sshConfig: sshd.configPath,
    home: sshd.dir,
    onState: (s) => {
      if (s.state === 'up') ups++;
    },
    connection: { agentSocket: null, backoff: { initialMs: 100, maxMs: 1000 } },
  });
});
afterAll(async () => {
  await target?.close();
  await sshd?.stop();
});

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function expectNumberedLines(text: string, prefix: string, count: number): void {
  const lines = text.split('\n').filter(Boolean);
  expect(lines).toHaveLength(count);
  lines.forEach((line, i) => {
    expect(line.startsWith(`${prefix} ${i + 1} `)).toBe(true);
  });
}

describe('EvidenceMirror over SSH', () => {
  it('stays byte-identical across 3 forced link cuts, and a restarted mirror resumes', async () => {
    const remote = join(sshd.dir, 'run');
    const local = join(sshd.dir, 'evidence');
    mkdirSync(remote);
    writeFileSync(join(remote, 'pid'), '4242\n');
    const seen = new Map<string, Buffer[]>();
    const onChunk = (rel: string, chunk: Buffer) => seen.set(rel, [...(seen.get(rel) ?? []), chunk]);
    const mirror = new EvidenceMirror(target, remote, local, { onChunk, pollMs: 50, listEveryMs: 200 });
    await mirror.start();

    // the writer: plain appends to the remote files, like the trainer's log and heartbeats
    let n = 0;
    const payload = 'x'.repeat(300); // lines long enough that reads split mid-line
    const writer = setInterval(() => {
      n++;
      appendFileSync(join(remote, 'stdout.log'), `step ${n} ${payload}\n`);
      appendFileSync(join(remote, 'heartbeat_rank0.jsonl'), `beat ${n} {"step": ${n}}\n`);
      if (n === 40) writeFileSync(join(remote, 'stackdump_1.txt'), 'Thread 0x1 (most recent call first):\n');
    }, 5);
    try {
      for (let cut = 1; cut <= 3; cut++) {
        const before = mirror.offsets()['stdout.log'] ?? 0;
        await waitUntil(() => (mirror.offsets()['stdout.log'] ?? 0) > before + 2000, {
          what: `progress before cut ${cut}`,
        });
        const upsBefore = ups;
        expect(sshd.killSessions()).toBeGreaterThan(0);
        await waitUntil(() => ups > upsBefore, { timeoutMs: 15_000, what: `reconnect after cut ${cut}` });
      }
      const after = mirror.offsets()['stdout.log'] ?? 0;
      await waitUntil(() => (mirror.offsets()['stdout.log'] ?? 0) > after + 2000, {
        what: 'progress after cuts',
      });
    } finally {
      clearInterval(writer);
    }
    const written = n;
    await mirror.close();

    for (const name of ['stdout.log', 'heartbeat_rank0.jsonl', 'stackdump_1.txt', 'pid']) {
      expect(sha256(join(local, name)), name).toBe(sha256(join(remote, name)));
      expect(
        Buffer.concat(seen.get(name) ?? []).equals(readFileSync(join(remote, name))),
        `${name} via onChunk`,
      ).toBe(true);
    }
    expectNumberedLines(readFileSync(join(local, 'stdout.log'), 'utf8'), 'step', written);
    expectNumberedLines(readFileSync(join(local, 'heartbeat_rank0.jsonl'), 'utf8'), 'beat', written);
    const state = JSON.parse(readFileSync(join(local, MIRROR_STATE_FILE), 'utf8'));
    expect(state.offsets['stdout.log']).toBe(readFileSync(join(remote, 'stdout.log')).length);

    // a new process: more output arrived meanwhile; only the new bytes are fetched and emitted
    for (let i = written + 1; i <= written + 10; i++)
      appendFileSync(join(remote, 'stdout.log'), `step ${i} ${payload}\n`);
    writeFileSync(join(remote, 'exit_code'), '0\n');
    const fresh: Buffer[] = [];
    const second = new EvidenceMirror(target, remote, local, {
      onChunk: (rel, c) => rel === 'stdout.log' && fresh.push(c),
      pollMs: 50,
    });
    await second.start();
    await second.close();
    expect(sha256(join(local, 'stdout.log'))).toBe(sha256(join(remote, 'stdout.log')));
    expect(readFileSync(join(local, 'exit_code'), 'utf8')).toBe('0\n');
    const freshLines = Buffer.concat(fresh).toString().split('\n').filter(Boolean);
    expect(freshLines.map((l) => l.split(' ')[1])).toEqual(
      Array.from({ length: 10 }, (_, i) => String(written + 1 + i)),
    );
  });
});
