/**
 * A trainer nobody wrote a parser for: its step lines are learned from real output (minGPT's
 * chargpt, unpatched, and a trainer made up for the test), and output with nothing step-like gets a
 * note with a regex that reads it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { IngestEvent, StepEvent } from '../../../src/ingest/events.js';
import { shapeOf } from '../../../src/ingest/line-shape.js';
import { StdoutParser } from '../../../src/ingest/stdout-parser.js';
import { parseWithLaneRegex } from '../../../src/ingest/step-formats.js';
import { StepShapeLearner } from '../../../src/ingest/step-shape-learner.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'zero-config');
const lines = (name: string) =>
  readFileSync(join(FIX, name), 'utf8')
    .split('\n')
    .filter((l) => l !== '');

function parse(input: string[], withTs = true): IngestEvent[] {
  const p = new StdoutParser();
  const out: IngestEvent[] = [];
  input.forEach((l, i) => {
    out.push(...p.push(l, withTs ? 1000 + i : undefined));
  });
  out.push(...p.flush());
  return out;
}
const steps = (ev: IngestEvent[]) => ev.filter((e): e is StepEvent => e.kind === 'step');

describe('the shape of a line', () => {
  it('reads each number’s role from the word next to it', () => {
    const s = shapeOf('iter_dt 137.20ms; iter 10: train loss 3.00450')!;
    expect(s.template).toBe('iter_dt #ms; iter #: train loss #');
    expect(s.numbers.map((n) => [n.text, n.role])).toEqual([
      ['137.20', 'ms'],
      ['10', 'step'],
      ['3.00450', 'loss'],
    ]);
    expect(
      shapeOf('epoch 0 | batch 30 | train_loss 2.8123 | 41.7 ms/it')!.numbers.map((n) => n.role),
    ).toEqual(['other', 'step', 'loss', 'ms']);
    // digits inside words are not numbers; a second loss is not the loss
    expect(shapeOf('gpt2 step 5 loss 1.5 (avg loss 1.7)')!.numbers.map((n) => n.role)).toEqual([
      'step',
      'loss',
      'other',
    ]);
  });
});

describe('learning the step line of an unknown trainer', () => {
  it('minGPT (real capture), read as if no parser knew it: every step line from iteration 0, loss and iter_dt', () => {
    // the parser knows minGPT (format `mingpt`); the learner alone shows a trainer nobody knows
    const learner = new StepShapeLearner();
    const st = lines('mingpt-chargpt-cpu.log').flatMap((l, i) => learner.observe(l, 1000 + i));
    expect(st.map((s) => s.step.step)).toEqual(Array.from({ length: 20 }, (_, i) => i * 10));
    expect(st[0]!.step).toMatchObject({ step: 0, loss: 3.41049, format: 'inferred' });
    expect(st[0]!.step.seconds).toBeUndefined(); // `iter_dt 0.00ms`: no time of its own
    expect(st[1]!.step).toMatchObject({ step: 10, loss: 3.0045, seconds: 0.1372 });
    expect(st[19]!.step).toMatchObject({ step: 190, loss: 0.89885 });
    // the line that revealed the shape keeps its own arrival time
    expect(st[0]!.ts).toBeLessThan(st[1]!.ts!);
    expect(learner.inferred?.template).toBe('iter_dt #ms; iter #: train loss #');
    // the regex it reports is one a lane can use as its stepRegex
    const re = new RegExp(learner.inferred!.stepRegex);
    expect(parseWithLaneRegex('iter_dt 28.52ms; iter 30: train loss 3.70531', re)).toMatchObject({
      step: 30,
      loss: 3.70531,
      seconds: 0.02852,
    });
  });

  it('through the parser, minGPT is its own known format', () => {
    const st = steps(parse(lines('mingpt-chargpt-cpu.log')));
    expect(st).toHaveLength(20);
    expect(st.every((s) => s.format === 'mingpt')).toBe(true);
  });

  it('a made-up format: steps, loss and step time; its other lines stay log lines', () => {
    const input = lines('unknown-format.log');
    const ev = parse(input);
    expect(steps(ev).map((s) => [s.step, s.format])).toEqual(
      [0, 10, 20, 30, 40, 50].map((n) => [n, 'inferred']),
    );
    expect(steps(ev).every((s) => s.seconds !== undefined && s.seconds > 0.01 && s.seconds < 1)).toBe(true);
    const logs = ev.filter((e) => e.kind === 'log').map((e) => (e as { text: string }).text);
    // the lines read before their shape was known were log lines when they came (and are steps now)
    expect(logs).toEqual([
      'loading data: 4 shards, 1200 samples',
      'model: 2 layers, 0.09M parameters',
      input[2],
      'done.',
    ]);
  });

  it('a shape seen on one line is still the best guess at the end', () => {
    const ev = parse(['setup', 'step 0 loss 2.5', 'done'], false);
    expect(steps(ev).map((s) => s.step)).toEqual([0]);
  });

  it('a counter that goes back is not a step counter', () => {
    const ev = parse(['batch 2 loss 2.5', 'batch 1 loss 2.4', 'batch 2 loss 2.3', 'batch 1 loss 2.2'], false);
    expect(steps(ev)).toEqual([]);
  });

  it('a known format is never second-guessed: nanoGPT’s lines are nanogpt steps, and nothing is learned', () => {
    const ev = parse([
      'iter 0: loss 4.2, time 50.1ms, mfu -100.00%',
      'step 1 of something loss 3',
      'step 2 loss 2',
      'step 3 loss 1',
      'step 4 loss 1',
    ]);
    expect(steps(ev).map((s) => s.format)).toEqual(['nanogpt']);
    expect(ev.some((e) => e.kind === 'output-format')).toBe(false);
  });

  it('nothing step-like: the note’s shapes and a regex that reads them (as a lane stepRegex)', () => {
    const input = lines('unknown-plain.log');
    const ev = parse(input);
    expect(steps(ev)).toEqual([]);
    const fmt = ev.find((e) => e.kind === 'output-format') as Extract<IngestEvent, { kind: 'output-format' }>;
    expect(fmt.unrecognised!.lines).toBe(9);
    expect(fmt.unrecognised!.shapes[0]).toMatchObject({ template: '[#:#:#] # | # | #', count: 6 });
    const re = new RegExp(fmt.unrecognised!.stepRegex!);
    const read = new StdoutParser({ stepRegex: re });
    const got = input.flatMap((l) => read.push(l)).filter((e): e is StepEvent => e.kind === 'step');
    expect(got.map((s) => s.step)).toEqual([0, 10, 20, 30, 40, 50]);
    expect(got[0]!.loss).toBeCloseTo(3.465, 3);
  });

  it('says so after the first minute of output with no step line, once', () => {
    const p = new StdoutParser();
    const said = [0, 30, 59, 61, 90].map(
      (t) => p.push(`warming up ${t} things`, 1000 + t).filter((e) => e.kind === 'output-format').length,
    );
    expect(said).toEqual([0, 0, 0, 1, 0]);
  });
});
