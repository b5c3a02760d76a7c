import { describe, expect, it } from 'vitest';
import { applyChanges, changesBetween, describeChange, parseOptions } from '../../../src/bisect/delta.js';
import { parseDetector } from '../../../src/bisect/detector-arg.js';

describe('changesBetween / applyChanges', () => {
  const good = { env: { A: '1', B: '1', C: 'x' }, args: ['--precision', 'bf16', '--compile'] };
  const bad = { env: { A: '1', C: 'y', D: '0' }, args: ['--precision', 'fp16', '--seq-len', '1024'] };

  it('one change per variable set, unset or changed, and per option', () => {
    const ch = changesBetween(good, bad);
    expect(ch.map(describeChange)).toEqual([
      'B unset',
      'C x→y',
      'D=0',
      '--compile dropped',
      '--precision bf16→fp16',
      '--seq-len 1024',
    ]);
  });

  it('all changes applied give the bad side; none give the good side', () => {
    const ch = changesBetween(good, bad);
    const all = applyChanges(good, ch);
    expect(all.env).toEqual(bad.env);
    expect(parseOptions(all.args)).toEqual(expect.arrayContaining(parseOptions(bad.args)!));
    expect(all.args).toHaveLength(bad.args.length);
    expect(applyChanges(good, [])).toEqual(good);
  });

  it('a subset applies only its changes', () => {
    const ch = changesBetween(good, bad);
    const one = applyChanges(good, [ch[0]!, ch[4]!]);
    expect(one.env).toEqual({ A: '1', C: 'x' });
    expect(one.args).toEqual(['--precision', 'fp16', '--compile']);
  });

  it('args that are not plain options are one change as a whole', () => {
    const ch = changesBetween(
      { env: {}, args: ['train', '--x', '1'] },
      { env: {}, args: ['eval', '--x', '1'] },
    );
    expect(ch).toHaveLength(1);
    expect(ch[0]).toMatchObject({ kind: 'args', name: 'args' });
    expect(applyChanges({ env: {}, args: ['train', '--x', '1'] }, ch).args).toEqual(['eval', '--x', '1']);
  });

  it('the same env and args: no changes', () => {
    expect(changesBetween(good, { env: { ...good.env }, args: [...good.args] })).toEqual([]);
  });
});

describe('--detector', () => {
  it('takes NAME=NUMBER pairs of the detector fields', () => {
    expect(parseDetector('floorS=2, spinConfirmS=4,firstStepS=5')).toEqual({
      settings: { floorS: 2, spinConfirmS: 4, firstStepS: 5 },
    });
    expect(parseDetector(undefined)).toEqual({});
  });
  it('says what is wrong', () => {
    expect(parseDetector('floor=2')).toEqual({
      error: expect.stringMatching(/"floor=2" is not NAME=NUMBER/),
    });
    expect(parseDetector('k=0')).toEqual({ error: '--detector: k must be a number ≥ 1' });
  });
});
