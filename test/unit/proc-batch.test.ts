import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseProcBatch, READ_SCRIPT } from '../../src/runs/proc-batch.js';
import { waitUntil } from '../helpers/wait.js';

describe('one /proc read for many pids', () => {
  it('parses each pid’s stat, caught signals and wait channel; a pid that is gone is absent', () => {
    const text = [
      '@@ 101',
      '101 (python3) S 1 101 101 0 -1 4194560 1 0 0 0 250 50 0 0 20 0 4 0 1 1 1',
      '@@c 0000000180004a02',
      '@@w futex_wait_queue',
      '@@ 102',
      '102 (pt main thread) R 1 102 102 0 -1 4194560 1 0 0 0 900 100 0 0 20 0 4 0 1 1 1',
      '@@c 0000000000000800',
      '@@w 0',
    ].join('\n');
    const m = parseProcBatch(text);
    expect([...m.keys()]).toEqual([101, 102]);
    expect(m.get(101)).toEqual({
      state: 'S',
      ticks: 300,
      wchan: 'futex_wait_queue',
      sigCgt: '0000000180004a02',
    });
    expect(m.get(102)).toMatchObject({ state: 'R', ticks: 1000, wchan: '' });
    expect(m.has(103)).toBe(false);
  });

  it('the script a node runs reads real processes as /proc says, with no process started per pid', async () => {
    // a sleeping shell whose name has a space and a paren (the stat line's name field), and its own
    // child `sleep`; a pid that does not exist
    const odd = spawn('sh', ['-c', 'printf "x y) z" > /proc/$$/comm; trap "exit 0" USR1; sleep 30 & wait'], {
      stdio: 'ignore',
    });
    try {
      await waitUntil(() => readFileSync(`/proc/${odd.pid}/comm`, 'utf8').startsWith('x y) z'), {
        what: 'renamed',
      });
      // asleep in `wait`, not in a moment's sleep before it: until its child has become `sleep`
      // the shell may sleep while the child starts, then run on (read as S, its wait channel
      // empty, on a loaded box)
      const childIsSleep = () =>
        readFileSync(`/proc/${odd.pid}/task/${odd.pid}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .some((c) => c !== '' && readFileSync(`/proc/${c}/comm`, 'utf8').trim() === 'sleep');
      await waitUntil(childIsSleep, { what: 'its child is sleep' });
      const wchan = () => readFileSync(`/proc/${odd.pid}/wchan`, 'utf8');
      await waitUntil(
        () => readFileSync(`/proc/${odd.pid}/stat`, 'utf8').includes(') S ') && !['', '0'].includes(wchan()),
        { what: 'asleep' },
      );
      const gone = 4_194_000; // above any pid this box hands out
      const r = spawnSync(
        'sh',
        ['-c', READ_SCRIPT, 'sh', String(odd.pid), String(gone), String(process.pid)],
        {
          encoding: 'utf8',
        },
      );
      expect(r.stderr).toBe('');
      const m = parseProcBatch(r.stdout);
      expect([...m.keys()]).toEqual([odd.pid, process.pid]);
      const status = readFileSync(`/proc/${odd.pid}/status`, 'utf8');
      expect(m.get(odd.pid!)).toMatchObject({
        state: 'S',
        wchan: wchan(),
        sigCgt: /^SigCgt:\s*(\S+)/m.exec(status)![1],
      });
      expect(m.get(odd.pid!)!.wchan).not.toBe('');
      expect(m.get(odd.pid!)!.ticks).toEqual(expect.any(Number));
      expect(m.get(process.pid)!.state).toMatch(/^[RS]$/);
      // builtins only: tracing the script's shell shows no fork or exec of its own
      const trace = spawnSync('sh', ['-xc', READ_SCRIPT, 'sh', String(odd.pid)], { encoding: 'utf8' });
      expect(trace.stderr).not.toMatch(/\b(cat|sed|awk|date)\b/);
    } finally {
      odd.kill('SIGKILL');
    }
  });
});
