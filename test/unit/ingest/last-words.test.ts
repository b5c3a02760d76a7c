/**
 * Last words read from real stack logs (test/fixtures/last-words/, written by the stack hook in
 * real processes: see its README): the records' signal, time, threads and the main thread's top
 * frame, through the one run-folder reader, and the verdict's sentence about them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Evidence } from '../../../src/analysis/evidence.js';
import { lastWordsSummary } from '../../../src/analysis/last-words.js';
import { formatReport } from '../../../src/cli/commands/analyze.js';
import type { DumpEvent, LastWordsEvent } from '../../../src/ingest/events.js';
import { RunFolderReader } from '../../../src/ingest/run-folder.js';
import { StackLogReader } from '../../../src/ingest/stack-log.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';
import { rankSetText as rankSet } from '../../../src/util/rank-set.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'last-words');

function read(text: string, name = 'nsa-dbg-stacks_rank0_pid1.log', chunk?: number) {
  const words = new Map<string, LastWordsEvent>();
  const dumps: DumpEvent[] = [];
  const r = new StackLogReader(
    name,
    () => {},
    (d) => dumps.push(d),
    (w) => words.set(w.name, w),
  );
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  lines.forEach((l, i) => {
    r.line(l);
    if (chunk !== undefined && i % chunk === 0) r.flush();
  });
  r.end();
  return { words: [...words.values()], dumps };
}

const fixture = (dir: string, file: string) => readFileSync(join(FIX, dir, file), 'utf8');
const logOf = (dir: string, rank: number) =>
  readdirSync(join(FIX, dir)).find((f) => f.startsWith(`nsa-dbg-stacks_rank${rank}_`))!;

describe('last words in a real stack log', () => {
  it("a SIGTERM record from torchrun's stop: signal, time, pid, the main thread blocked in all_reduce, no watcher thread", () => {
    const { words, dumps } = read(fixture('torchrun-crash', logOf('torchrun-crash', 0)));
    expect(dumps).toEqual([]);
    expect(words).toHaveLength(1);
    const w = words[0]!;
    expect(w).toMatchObject({ kind: 'last-words', rank: 0, signal: 'SIGTERM', fatal: false, complete: true });
    expect(w.at).toBeCloseTo(1795703176.851, 3);
    expect(w.pid).toBeGreaterThan(0);
    expect(w.threads.map((t) => t.name)).toEqual(['MainThread']);
    const top = w.threads[0]!.frames.at(-1)!;
    expect(top).toMatchObject({ function: 'all_reduce', line: 1541 });
    expect(top.file).toMatch(/torch\/distributed\/distributed_c10d\.py$/);
  });

  it('a log with only its header (the rank that raised) has no last words', () => {
    expect(read(fixture('torchrun-crash', logOf('torchrun-crash', 2))).words).toEqual([]);
  });

  it("fatal signals: faulthandler's text is a record of SIGSEGV / SIGABRT with no time, complete at the end of the file", () => {
    const [segv, abrt] = ['nsa-dbg-stacks_rank0_pid3250.log', 'nsa-dbg-stacks_rank0_pid3252.log'].map(
      (f) => read(fixture('fatal', f)).words,
    );
    expect(segv).toHaveLength(1);
    expect(segv![0]).toMatchObject({ signal: 'SIGSEGV', fatal: true, at: null, complete: true });
    expect(segv![0]!.threads.find((t) => t.name === 'MainThread')!.frames.at(-1)).toMatchObject({
      function: 'string_at',
    });
    expect(abrt![0]).toMatchObject({ signal: 'SIGABRT', fatal: true });
    expect(abrt![0]!.threads.find((t) => t.name === 'MainThread')!.frames.at(-1)).toMatchObject({
      function: '<module>',
    });
  });

  it('read in pieces as it grows (live), the record is the same as read whole; a request after it is its own dump', () => {
    const text = fixture('torchrun-crash', logOf('torchrun-crash', 1));
    const whole = read(text).words;
    expect(read(text, undefined, 1).words).toEqual(whole);
    const reqDump = text
      .split('\n')
      .filter((l) => !l.startsWith('# nsa-dbg stacks'))
      .join('\n')
      .replace(/^# last-words .*$/m, '# request 1795703100.000')
      .replace('# last-words-end', '');
    const both = read(`${text}${reqDump}`);
    expect(both.words).toHaveLength(1);
    expect(both.dumps.length).toBeGreaterThan(0);
    // the hook's watcher thread is no thread of the program in a request's dump either
    expect(both.dumps.at(-1)!.threads.map((t) => t.name)).toEqual(['MainThread']);
  });

  it('through the run-folder reader into the verdict: ranks 0 and 1 waiting in all_reduce when torchrun stopped them', () => {
    const ev = new Evidence();
    const reader = new RunFolderReader(ev);
    for (const f of readdirSync(join(FIX, 'torchrun-crash')))
      reader.push(f, readFileSync(join(FIX, 'torchrun-crash', f)));
    reader.end();
    const r = ev.result({});
    expect(r.lastWords.map((w) => [w.rank, w.signal, w.waiting, w.mainThreadTop?.function])).toEqual([
      [0, 'SIGTERM', true, 'all_reduce'],
      [1, 'SIGTERM', true, 'all_reduce'],
    ]);
    expect(lastWordsSummary(r.lastWords, true, 2)).toBe(
      'ranks 0 and 1 were waiting in all_reduce when torchrun stopped them (SIGTERM)',
    );
    expect(lastWordsSummary(r.lastWords, false)).toBe(
      'ranks 0 and 1 were waiting in all_reduce when SIGTERM came',
    );
    expect(r.summary).toContain('ranks 0 and 1 were waiting in all_reduce');
    // `nsa-dbg analyze` (text): a line per rank
    const text = formatReport(r);
    expect(text).toMatch(
      /^last words: rank 0 \(pid \d+\), SIGTERM at 2026-\S+Z: waiting in all_reduce \(\S+distributed_c10d\.py:1541\)$/m,
    );
    expect(text.match(/^last words: /gm)).toHaveLength(2);
  });

  it('ranks that died of SIGKILL with no record are named; one with a record is said by it', () => {
    expect(lastWordsSummary([], true, undefined, [4, 5, 6])).toBe(
      'ranks 4–6 were killed by SIGKILL (no last words)',
    );
    const ev = new Evidence();
    const reader = new RunFolderReader(ev);
    const f = logOf('torchrun-crash', 0);
    reader.push(f, readFileSync(join(FIX, 'torchrun-crash', f)));
    reader.end();
    expect(lastWordsSummary(ev.result({}).lastWords, true, undefined, [0, 2])).toBe(
      'rank 2 was killed by SIGKILL (no last words); rank 0 was waiting in all_reduce when torchrun stopped it (SIGTERM)',
    );
  });

  it('rank sets as ranges when long', () => {
    expect(rankSet([3])).toBe('rank 3');
    expect(rankSet([1, 0])).toBe('ranks 0 and 1');
    expect(rankSet([0, 1, 2, 3, 4, 5, 6])).toBe('ranks 0–6');
    expect(rankSet([0, 1, 2, 3, 5, 7, 8])).toBe('ranks 0–3, 5, 7 and 8');
  });

  it('a fatal record reads as a death, a rank elsewhere as where it was', () => {
    const ev = new Evidence();
    const reader = new RunFolderReader(ev);
    reader.push(
      'nsa-dbg-stacks_rank0_pid3250.log',
      readFileSync(join(FIX, 'fatal', 'nsa-dbg-stacks_rank0_pid3250.log')),
    );
    reader.end();
    const list = ev.result({}).lastWords;
    expect(list[0]).toMatchObject({ rank: 0, signal: 'SIGSEGV', waiting: false, at: null });
    expect(lastWordsSummary(list, false)).toMatch(
      /^rank 0 died of SIGSEGV in string_at \(__init__\.py:\d+\) from <module> \(blocked\.py:16\)$/,
    );
  });

  it('a real NCCL run on two H100s: the rank stopped while CUDA waited for the collective is named, with the line of the loop that waited', async () => {
    const r = await analyzeDir(join(FIX, 'h100x2-nccl'));
    expect(r.verdict).toBe('crash');
    expect(r.lastWords).toEqual([
      expect.objectContaining({
        rank: 0,
        signal: 'SIGTERM',
        waiting: false,
        mainThreadTop: expect.objectContaining({ function: 'synchronize' }),
        calledFrom: { function: 'main', file: '/srv/job/lw_nccl.py', line: 27 },
      }),
    ]);
    expect(r.summary).toMatch(
      /crash at step 3, rank 1: ValueError: .*; rank 0 was in synchronize \(__init__\.py:1162\) from main \(lw_nccl\.py:27\) when torchrun stopped it \(SIGTERM\)$/,
    );
  });
  it('a real NCCL watchdog timeout on two H200s: the aborting rank died outside any Python code, the other was in its own code when torchrun stopped it', async () => {
    const r = await analyzeDir(join(FIX, 'h200x2-watchdog'));
    expect(r.verdict).toBe('hang');
    expect(r.lastWords).toEqual([
      expect.objectContaining({
        rank: 0,
        signal: 'SIGABRT',
        fatal: true,
        mainThreadTop: null,
        noPythonFrame: true,
      }),
      expect.objectContaining({
        rank: 1,
        signal: 'SIGTERM',
        fatal: false,
        waiting: false,
        mainThreadTop: { function: '<module>', file: '/srv/nsa-dbg/test/device/fr_timeout.py', line: 23 },
      }),
    ]);
    expect(r.summary).toBe(
      'hang: rank 1 never entered nccl:all_reduce #6 (default_pg) that rank 0 waited in (<module> /srv/nsa-dbg/test/device/fr_timeout.py:24), from the Flight Recorder; ' +
        'rank 0 died of SIGABRT outside any Python code (its script had ended or not begun); ' +
        'rank 1 was in <module> (fr_timeout.py:23) when torchrun stopped it (SIGTERM)',
    );
  });
});
