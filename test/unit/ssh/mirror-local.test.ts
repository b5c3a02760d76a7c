/** EvidenceMirror on the local Target, and resume from state. */

import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultMirrorFilter, EvidenceMirror, MIRROR_STATE_FILE } from '../../../src/runs/mirror.js';
import { LocalTarget } from '../../../src/targets/local.js';
import { waitUntil } from '../../helpers/wait.js';

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

describe('EvidenceMirror on a local target', () => {
  it('mirrors every flat file byte-identically, skips temp files and folders, resumes without duplicates', async () => {
    const root = mkdtempSync(join(tmpdir(), 'nsa-mirror-'));
    const remote = join(root, 'run');
    const local = join(root, 'evidence');
    mkdirSync(join(remote, 'tb'), { recursive: true });
    writeFileSync(join(remote, 'stdout.log'), 'step 1\n');
    writeFileSync(join(remote, 'env.json'), '{"a":1}\n');
    writeFileSync(join(remote, 'metrics.json.tmp-123'), 'partial');
    const chunks: string[] = [];
    const target = new LocalTarget();
    const m = new EvidenceMirror(target, remote, local, {
      onChunk: (rel, c) => chunks.push(`${rel}:${c.toString()}`),
      listEveryMs: 50,
      pollMs: 20,
    });
    await m.start();
    appendFileSync(join(remote, 'stdout.log'), 'step 2\n');
    writeFileSync(join(remote, '.HALT'), '');
    writeFileSync(join(remote, 'watchdog_stackdump_9.txt'), 'dump\n');
    await waitUntil(() => m.offsets()['watchdog_stackdump_9.txt'] === 5, { what: 'new file mirrored' });
    await m.close();
    for (const f of ['stdout.log', 'env.json', 'watchdog_stackdump_9.txt', '.HALT']) {
      expect(sha(join(local, f)), f).toBe(sha(join(remote, f)));
    }
    expect(chunks.join('')).not.toContain('partial');
    expect(Object.keys(m.offsets())).toEqual([]); // closed
    const state = JSON.parse(readFileSync(join(local, MIRROR_STATE_FILE), 'utf8'));
    expect(state.offsets['stdout.log']).toBe(14);
    expect(state.offsets.tb).toBeUndefined();

    appendFileSync(join(remote, 'stdout.log'), 'step 3\n');
    const again: string[] = [];
    const m2 = new EvidenceMirror(target, remote, local, { onChunk: (rel, c) => again.push(`${rel}:${c}`) });
    await m2.start();
    await m2.close();
    expect(again).toEqual(['stdout.log:step 3\n']);
    expect(readFileSync(join(local, 'stdout.log'), 'utf8')).toBe('step 1\nstep 2\nstep 3\n');
  });

  it('close() lists again after a listing that was under way: a file created meanwhile is mirrored', async () => {
    const root = mkdtempSync(join(tmpdir(), 'nsa-mirror-'));
    const remote = join(root, 'run');
    const local = join(root, 'evidence');
    mkdirSync(remote, { recursive: true });
    writeFileSync(join(remote, 'stdout.log'), 'step 1\n');
    // a listing that has read the folder but not returned yet (a slow link): held until released
    let release: () => void = () => {};
    let hold = false;
    let held = false;
    const target = new LocalTarget();
    const listDir = target.listDir.bind(target);
    target.listDir = async (dir: string) => {
      const names = await listDir(dir);
      if (hold) {
        hold = false;
        held = true;
        await new Promise<void>((r) => (release = r));
      }
      return names;
    };
    const m = new EvidenceMirror(target, remote, local, { listEveryMs: 60_000, pollMs: 20 });
    await m.start();
    hold = true;
    const under = m.scan();
    await waitUntil(() => held, { what: 'a listing under way' });
    // the file the last probe appended, after that listing read the folder
    writeFileSync(join(remote, 'nsa-dbg-probes.jsonl'), '{"kind":"proc"}\n');
    const closing = m.close();
    release();
    await Promise.all([under, closing]);
    expect(readFileSync(join(local, 'nsa-dbg-probes.jsonl'), 'utf8')).toBe('{"kind":"proc"}\n');
  });

  it('filters atomic-write temp names and its own state file', () => {
    expect(defaultMirrorFilter('stdout.log')).toBe(true);
    expect(defaultMirrorFilter('heartbeat_rank0.jsonl')).toBe(true);
    expect(defaultMirrorFilter('command.json.tmp-ab12')).toBe(false);
    expect(defaultMirrorFilter('x.tmp')).toBe(false);
    expect(defaultMirrorFilter(MIRROR_STATE_FILE)).toBe(false);
  });
});
