import { describe, expect, it } from 'vitest';
import { optionIn, proofLine, proofOf } from '../../../src/notebook/run-proof.js';
import { parseCmdline, parseEnviron, parseEnvironBatch } from '../../../src/runs/proc-environ.js';

describe('/proc environ and cmdline', () => {
  it('splits NUL-separated entries; a value may hold = and newlines', () => {
    const env = parseEnviron(Buffer.from('A=1\0B=x=y\0C=two\nlines\0\0', 'utf8'));
    expect(env).toEqual({ A: '1', B: 'x=y', C: 'two\nlines' });
    expect(parseCmdline(Buffer.from('python3\0-u\0train.py\0--lr\x001e-4\0'))).toEqual([
      'python3',
      '-u',
      'train.py',
      '--lr',
      '1e-4',
    ]);
  });

  it('reads the batch a remote box prints (base64 per pid; a pid that is gone prints nothing)', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const text = `@@ 41\n${b64('A=1\0RANK=0\0')}\n@@a ${b64('python3\0t.py\0')}\n@@ 42\n${b64('A=1\0RANK=1\0')}\n@@a ${b64('python3\0t.py\0')}\n`;
    const got = parseEnvironBatch(text);
    expect([...got.keys()]).toEqual([41, 42]);
    expect(got.get(42)).toEqual({ pid: 42, env: { A: '1', RANK: '1' }, argv: ['python3', 't.py'] });
  });
});

describe('proofOf', () => {
  const ranks = (...envs: Array<Record<string, string>>) =>
    envs.map((env, rank) => ({ rank, env, argv: ['python3', 't.py', '--precision', 'fp16', '--compile'] }));

  it('every rank saw the intended env and options: proven', () => {
    const p = proofOf(
      { env: { A: '1', B: null }, options: { '--precision': 'fp16', '--compile': '', '--seq': null } },
      ranks({ A: '1' }, { A: '1' }),
    );
    expect(p).toEqual({
      ranks: [0, 1],
      saw: { A: '1', B: null, '--precision': 'fp16', '--compile': '', '--seq': null },
      notApplied: [],
    });
    expect(proofLine(p)).toBe('env proven applied on 2 ranks');
  });

  it('one rank that missed a variable makes it not applied, naming what that rank saw', () => {
    const p = proofOf({ env: { A: '1', B: '0' } }, ranks({ A: '1', B: '0' }, { B: '7' }));
    expect(p.notApplied).toEqual([
      { name: 'A', expected: '1', saw: null, rank: 1 },
      { name: 'B', expected: '0', saw: '7', rank: 1 },
    ]);
    expect(proofLine(p)).toBe('change not applied: A (rank 1 saw it unset), B (rank 1 saw B=7)');
  });

  it('a variable meant to be unset but inherited is not applied either; secrets stay masked', () => {
    const p = proofOf({ env: { X: null, HF_TOKEN: 'abc' } }, ranks({ X: '1', HF_TOKEN: 'zzz' }));
    expect(p.notApplied).toEqual([
      { name: 'X', expected: null, saw: '1', rank: 0 },
      { name: 'HF_TOKEN', expected: '***', saw: '***', rank: 0 },
    ]);
  });

  it("nsa-dbg's stack hook goes first on PYTHONPATH: the lane's value after it still counts", () => {
    const p = proofOf({ env: { PYTHONPATH: '/src' } }, ranks({ PYTHONPATH: '/run/.nsa-dbg-py:/src' }));
    expect(p.notApplied).toEqual([]);
  });

  it('no rank read (the process was gone): nothing proven, nothing marked', () => {
    const p = proofOf({ env: { A: '1' } }, []);
    expect(p).toEqual({ ranks: [], saw: {}, notApplied: [] });
    expect(proofLine(p)).toMatch(/^env not checked/);
  });

  it('options: --name value, --name=value, a bare flag, absent', () => {
    expect(optionIn(['--a', '1', '--b=2', '--c'], '--a')).toBe('1');
    expect(optionIn(['--a', '1', '--b=2', '--c'], '--b')).toBe('2');
    expect(optionIn(['--a', '1', '--b=2', '--c'], '--c')).toBe('');
    expect(optionIn(['--a', '1'], '--d')).toBeNull();
  });
});
