/**
 * The rate chart of a trainer that prints no toks/s: its step time, from its own printed time
 * (minGPT's iter_dt, real capture) or from the step lines' arrival times over the logging interval.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DigestCollector } from '../../../src/analysis/run-digest.js';
import { StdoutParser } from '../../../src/ingest/stdout-parser.js';

const MINGPT = join(import.meta.dirname, '..', '..', 'fixtures', 'zero-config', 'mingpt-chargpt-cpu.log');

function digestOf(lines: string[], ts?: (i: number) => number): DigestCollector {
  const p = new StdoutParser();
  const d = new DigestCollector();
  lines.forEach((l, i) => {
    for (const e of p.push(l, ts?.(i))) d.event(e, l);
  });
  for (const e of p.flush()) d.event(e);
  return d;
}

describe('the rate chart without toks/s', () => {
  it('minGPT: its own iter_dt, in ms per step', () => {
    const c = digestOf(readFileSync(MINGPT, 'utf8').split('\n')).chartSeries();
    expect(c.rateLabel).toBe('ms/step');
    expect(c.toks[0]).toEqual({ step: 10, value: 137.2 });
    expect(c.toksTotal).toBe(19); // iteration 0's `iter_dt 0.00ms` is no time
  });

  it('no printed time: arrivals over the steps between two lines', () => {
    const lines = ['step 0 loss 3.0', 'step 10 loss 2.9', 'step 20 loss 2.8'];
    const c = digestOf(lines, (i) => 100 + i * 2).chartSeries();
    expect(c.rateLabel).toBe('ms/step');
    expect(c.toks.map((p) => [p.step, Math.round(p.value)])).toEqual([
      [10, 200],
      [20, 200],
    ]);
  });

  it('a trainer that prints toks/s keeps the toks/s chart', () => {
    const c = digestOf(['step 0001 | loss 5.7 | lr 2.00e-05 | toks/s 66'], () => 1).chartSeries();
    expect(c.rateLabel).toBe('toks/s');
    expect(c.toks).toEqual([{ step: 1, value: 66 }]);
  });
});
