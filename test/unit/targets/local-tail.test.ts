/** The local tail: bytes once and in order, a grown file kept open within a budget, none leaked. */

import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { heldFdBudget, heldFdCount, LocalTail } from '../../../src/targets/local-tail.js';
import { waitUntil } from '../../helpers/wait.js';

const BUILT = join(import.meta.dirname, '..', '..', '..', 'dist', 'src', 'targets', 'local-tail.js');
const openFds = () => readdirSync('/proc/self/fd').length;

/** `name` holding `content` in a new folder, followed (not by the pace: a long pollMs), with what came */
function followed(name: string, content: string, appendOnly: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'nsa-tail-'));
  const f = join(dir, name);
  writeFileSync(f, content);
  const fds = openFds();
  const seen = { text: '' };
  const t = new LocalTail(f, (c) => (seen.text += c.toString()), 0, 10_000, appendOnly);
  return { dir, f, fds, t, got: () => seen.text };
}

describe('LocalTail', () => {
  it('an append-only file: one descriptor held while followed, every byte once and in order, none left after', () => {
    const { f, fds, t, got } = followed('heartbeat_rank0.jsonl', 'a\n', true);
    expect(heldFdCount()).toBe(1);
    expect(openFds()).toBe(fds + 1);
    for (let i = 0; i < 50; i++) {
      appendFileSync(f, `line ${i}\n`);
      t.poll();
    }
    // a poll is a read at the offset: no descriptor opened per poll
    expect(openFds()).toBe(fds + 1);
    appendFileSync(f, 'last\n');
    t.dispose();
    expect(got()).toBe(`a\n${Array.from({ length: 50 }, (_, i) => `line ${i}\n`).join('')}last\n`);
    expect(heldFdCount()).toBe(0);
    expect(openFds()).toBe(fds);
    // looked at after its end (a late drain): read, but nothing held again
    appendFileSync(f, 'later\n');
    t.poll();
    expect(heldFdCount()).toBe(0);
    expect(got().endsWith('later\n')).toBe(true);
  });

  it('a file that may be written anew is read by its name: the replacement is what is read', () => {
    const { dir, f, fds, t, got } = followed('metrics.json', '{"a":1}', false);
    expect(openFds()).toBe(fds);
    writeFileSync(join(dir, 'metrics.json.tmp'), '{"a":1,"b":22}');
    renameSync(join(dir, 'metrics.json.tmp'), f);
    t.poll();
    t.dispose();
    // by name: the bytes past the offset are the new file's
    expect(got()).toBe('{"a":1}"b":22}');
  });

  it('a file that does not exist yet is held once it appears', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-tail-'));
    const f = join(dir, 'stdout.log');
    let got = '';
    const t = new LocalTail(f, (c) => (got += c.toString()), 0, 10_000, true);
    expect(heldFdCount()).toBe(0);
    writeFileSync(f, 'hello\n');
    t.poll();
    expect(heldFdCount()).toBe(1);
    t.dispose();
    expect(got).toBe('hello\n');
    expect(heldFdCount()).toBe(0);
  });

  it('many tails at one pace: bytes appended later reach each of them, and none is looked at after its end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-tail-'));
    const n = 300;
    const got = Array.from({ length: n }, () => '');
    const tails = got.map((_, i) => {
      writeFileSync(join(dir, `f${i}`), '');
      return new LocalTail(join(dir, `f${i}`), (c) => (got[i] += c.toString()), 0, 20, i % 2 === 0);
    });
    for (let i = 0; i < n; i++) appendFileSync(join(dir, `f${i}`), `a${i}\n`);
    await waitUntil(() => got.every((g, i) => g === `a${i}\n`), { timeoutMs: 5000, what: 'every file read' });
    // quiet for a while: the backoff stretches the looks, new bytes still come within a second
    await new Promise((r) => setTimeout(r, 400));
    for (let i = 0; i < n; i++) appendFileSync(join(dir, `f${i}`), `b${i}\n`);
    await waitUntil(() => got.every((g, i) => g === `a${i}\nb${i}\n`), {
      timeoutMs: 5000,
      what: 'the late lines',
    });
    for (const t of tails) t.dispose();
    for (let i = 0; i < n; i++) appendFileSync(join(dir, `f${i}`), 'after\n');
    await new Promise((r) => setTimeout(r, 200));
    expect(got.every((g, i) => g === `a${i}\nb${i}\n`)).toBe(true);
    expect(heldFdCount()).toBe(0);
  });

  it('quiet files wake the process only when one is due: a few rounds a second, not one per pollMs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-tail-'));
    const rounds = new Set<number>();
    const tick = LocalTail.prototype.tick;
    const spy = vi.spyOn(LocalTail.prototype, 'tick').mockImplementation(function (
      this: LocalTail,
      now: number,
    ) {
      rounds.add(now);
      return tick.call(this, now);
    });
    try {
      const got = Array.from({ length: 20 }, () => '');
      const tails = got.map((_, i) => {
        writeFileSync(join(dir, `q${i}`), '');
        return new LocalTail(join(dir, `q${i}`), (c) => (got[i] += c.toString()), 0, 20, true);
      });
      // quiet: after 3 looks each backs off to 16 × 20 ms
      await new Promise((r) => setTimeout(r, 800));
      rounds.clear();
      await new Promise((r) => setTimeout(r, 1500));
      // 1.5 s at 20 ms is 75 ticks; backed off, every tail is due every 320 ms
      expect(rounds.size).toBeLessThanOrEqual(12);
      expect(rounds.size).toBeGreaterThanOrEqual(2);
      appendFileSync(join(dir, 'q7'), 'late\n');
      await waitUntil(() => got[7] === 'late\n', { timeoutMs: 2000, what: 'the late line' });
      for (const t of tails) t.dispose();
    } finally {
      spy.mockRestore();
    }
  });

  it('a file whose reads fail (here a directory: EISDIR) stops neither itself nor the other files of its pace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-tail-'));
    mkdirSync(join(dir, 'not-a-file'));
    writeFileSync(join(dir, 'ok'), '');
    let got = '';
    const bad = [true, false].map((held) => new LocalTail(join(dir, 'not-a-file'), () => {}, 0, 20, held));
    const ok = new LocalTail(join(dir, 'ok'), (c) => (got += c.toString()), 0, 20, true);
    for (let i = 0; i < 5; i++) {
      appendFileSync(join(dir, 'ok'), `${i}\n`);
      await waitUntil(() => got.endsWith(`${i}\n`), { timeoutMs: 2000, what: `line ${i}` });
    }
    for (const t of [...bad, ok]) t.dispose();
    expect(got).toBe('0\n1\n2\n3\n4\n');
    expect(heldFdCount()).toBe(0);
  });

  it('the budget is a quarter of the soft open-file limit', () => {
    const limit = /^Max open files\s+(\d+)/m.exec(
      spawnSync('cat', ['/proc/self/limits'], { encoding: 'utf8' }).stdout,
    );
    expect(heldFdBudget()).toBe(Math.min(4096, Math.floor(Number(limit?.[1]) / 4)));
  });

  it('past the budget (a low open-file limit), more files than it allows are all followed, by name', () => {
    // a child allowed 64 open files: 16 held, the other 24 looked at by their names
    const script = `
      const { appendFileSync, mkdtempSync, writeFileSync } = await import('node:fs');
      const { LocalTail, heldFdBudget, heldFdCount } = await import(${JSON.stringify(BUILT)});
      const dir = mkdtempSync('${tmpdir()}/nsa-tail-');
      const got = [];
      const tails = [];
      for (let i = 0; i < 40; i++) {
        writeFileSync(dir + '/f' + i, 'a' + i + '\\n');
        got.push('');
        tails.push(new LocalTail(dir + '/f' + i, (c) => (got[i] += c.toString()), 0, 10000, true));
      }
      const held = heldFdCount();
      for (let i = 0; i < 40; i++) appendFileSync(dir + '/f' + i, 'b' + i + '\\n');
      for (const t of tails) t.poll();
      for (const t of tails) t.dispose();
      const complete = got.filter((g, i) => g === 'a' + i + '\\nb' + i + '\\n').length;
      console.log(JSON.stringify({ budget: heldFdBudget(), held, files: 40, complete, after: heldFdCount() }));
    `;
    const r = spawnSync(
      'bash',
      ['-c', 'ulimit -n 64 && exec "$0" --input-type=module -e "$1"', process.execPath, script],
      { encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ budget: 16, held: 16, files: 40, complete: 40, after: 0 });
  });
});
