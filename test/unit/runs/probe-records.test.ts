// The probe file's records are appended together: at a confirmed hang of 256 ranks the prober files
// ~500 records a round, and one shell per record (on a box reached over SSH, a command each) fell
// further behind every round. Through a target that appends by a command (as a remote box does),
// 600 records take a few commands, land whole and in order; on this machine, no command at all.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProcProbeEvent } from '../../../src/ingest/events.js';
import { PROBES_FILE } from '../../../src/ingest/probes.js';
import { StackSampler } from '../../../src/runs/stack-sampler.js';
import { LocalTarget } from '../../../src/targets/local.js';

/** this machine, appending as a remote box must: by running a command */
class CommandAppends extends LocalTarget {
  execs = 0;
  // no file append: the sampler must append by running a command
  override appendFile = undefined as unknown as LocalTarget['appendFile'];
  override exec(...args: Parameters<LocalTarget['exec']>) {
    this.execs++;
    return super.exec(...args);
  }
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function sampler(target: LocalTarget) {
  const dir = mkdtempSync(join(tmpdir(), 'nsa-dbg-probes-'));
  dirs.push(dir);
  const s = new StackSampler({
    target,
    runDir: dir,
    outDir: dir,
    dumpsSeen: () => [],
    trainerNowS: () => Date.now() / 1000,
  });
  return { s, file: join(dir, PROBES_FILE) };
}

const proc = (rank: number): ProcProbeEvent => ({
  kind: 'proc',
  ts: 1795000000 + rank / 1000,
  rank,
  pid: 1000 + rank,
  state: 'S',
  cpuPct: 0,
  wchan: 'futex_wait_queue',
});

describe('probe records', () => {
  it('600 records through a command-appending target: a few commands, every line whole and in order', async () => {
    const target = new CommandAppends();
    const { s, file } = sampler(target);
    const done = Array.from({ length: 600 }, (_, r) => s.record(proc(r)));
    await Promise.all(done);
    await s.idle();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).rank)).toEqual(Array.from({ length: 600 }, (_, r) => r));
    // one append for the first record, the rest together (split only under the argument limit)
    expect(target.execs).toBeLessThanOrEqual(4);
  });

  it('records that come while an append runs go in the next one, after it', async () => {
    const target = new CommandAppends();
    const { s, file } = sampler(target);
    const first = s.record(proc(0));
    const more = [1, 2, 3].map((r) => s.record(proc(r)));
    await first;
    const later = [4, 5].map((r) => s.record(proc(r)));
    await Promise.all([...more, ...later]);
    await s.idle();
    const ranks = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).rank);
    expect(ranks).toEqual([0, 1, 2, 3, 4, 5]);
    expect(target.execs).toBeLessThanOrEqual(3);
  });

  it('on this machine the file is appended without a command', async () => {
    const local = new (class extends LocalTarget {
      execs = 0;
      override exec(...args: Parameters<LocalTarget['exec']>) {
        this.execs++;
        return super.exec(...args);
      }
    })();
    const { s, file } = sampler(local);
    await Promise.all(Array.from({ length: 50 }, (_, r) => s.record(proc(r))));
    await s.idle();
    expect(readFileSync(file, 'utf8').trimEnd().split('\n')).toHaveLength(50);
    expect(local.execs).toBe(0);
  });
});
