/**
 * A trainer nobody wrote a parser for: its step lines are learned from its output. Lines that no
 * known format took are read for their shape (line-shape.ts); the first shape seen on
 * ADOPT_AFTER lines with an increasing step-like integer and a loss-like number is adopted as the
 * run's step line, as if the lane had given that regex, and the lines of that shape seen before it
 * are steps too (they keep their own arrival times). Until then, the most frequent shapes are
 * counted, so that a run whose lines carry nothing step-like can be told what its lines look like
 * and which `stepRegex` would read them.
 */
import { type LineShape, type Role, regexOfShape, shapeOf } from './line-shape.js';
import { type ParsedStep, parseWithLaneRegex } from './step-formats.js';

/** lines of one shape, with increasing steps, before the shape is taken for the step line */
export const ADOPT_AFTER = 2;
/** shapes counted for the note (a trainer prints a few dozen kinds of lines, not thousands) */
const MAX_SHAPES = 256;
const EXAMPLE_CHARS = 160;

export interface OutputShapes {
  /** lines that no format read */
  lines: number;
  /** the most frequent shapes, most frequent first */
  shapes: Array<{ template: string; count: number; example: string }>;
  /** a lane `stepRegex` that would read the most step-like of them; null when no line has a number */
  stepRegex: string | null;
}

export interface InferredFormat {
  /** the adopted shape (`iter #: loss #`) and the regex it reads with */
  template: string;
  stepRegex: string;
}

interface Candidate {
  count: number;
  lastStep: number;
  increasing: boolean;
  pending: Array<{ line: string; ts: number | undefined }>;
}

interface ShapeCount {
  count: number;
  example: string;
  shape: LineShape;
  /** per number: its last value, how often it rose, whether it ever fell */
  last: number[];
  rose: number[];
  fell: boolean[];
}

export class StepShapeLearner {
  private adopted: { re: RegExp; format: InferredFormat } | null = null;
  private readonly candidates = new Map<string, Candidate>();
  private readonly shapes = new Map<string, ShapeCount>();
  private lines = 0;

  /** `adopt` false: the lane gave its own regex; shapes are only counted, for the note */
  constructor(private readonly adoptShapes = true) {}

  get inferred(): InferredFormat | null {
    return this.adopted?.format ?? null;
  }

  /**
   * A line no known format took. Returns the steps it makes known: this line's once a shape is
   * adopted, or every pending line of the shape this line got adopted; empty otherwise.
   */
  observe(line: string, ts?: number): Array<{ step: ParsedStep; ts: number | undefined }> {
    if (this.adopted !== null) {
      const p = parseWithLaneRegex(line, this.adopted.re, 'inferred');
      return p === null || p === 'malformed' ? [] : [{ step: p, ts }];
    }
    this.lines++;
    const shape = shapeOf(line);
    if (shape === null) return [];
    this.count(shape, line);
    const stepAt = shape.numbers.findIndex((n) => n.role === 'step');
    if (!this.adoptShapes || stepAt < 0 || !shape.numbers.some((n) => n.role === 'loss')) return [];
    const step = shape.numbers[stepAt]!.value;
    let c = this.candidates.get(shape.template);
    if (c === undefined) {
      if (this.candidates.size >= MAX_SHAPES) return [];
      c = { count: 0, lastStep: Number.NEGATIVE_INFINITY, increasing: true, pending: [] };
      this.candidates.set(shape.template, c);
    }
    c.count++;
    if (step <= c.lastStep) c.increasing = false;
    c.lastStep = step;
    c.pending.push({ line, ts });
    if (c.pending.length > ADOPT_AFTER) c.pending.shift();
    return c.increasing && c.count >= ADOPT_AFTER ? this.adopt(shape, c) : [];
  }

  /** the end of the output: a shape seen on fewer lines than ADOPT_AFTER is still the best guess */
  finish(): Array<{ step: ParsedStep; ts: number | undefined }> {
    if (this.adopted !== null || !this.adoptShapes) return [];
    let best: Candidate | undefined;
    for (const c of this.candidates.values()) if (c.increasing && c.count > (best?.count ?? 0)) best = c;
    if (best === undefined) return [];
    const shape = shapeOf(best.pending[0]!.line);
    return shape === null ? [] : this.adopt(shape, best);
  }

  /** what the unread lines look like, for the note that says no step line was recognised */
  summary(): OutputShapes {
    const ranked = [...this.shapes.entries()].sort((a, b) => b[1].count - a[1].count);
    return {
      lines: this.lines,
      shapes: ranked.slice(0, 3).map(([template, s]) => ({ template, count: s.count, example: s.example })),
      stepRegex: suggestRegex(ranked.map(([, s]) => s)),
    };
  }

  private adopt(shape: LineShape, c: Candidate): Array<{ step: ParsedStep; ts: number | undefined }> {
    const stepRegex = regexOfShape(shape);
    this.adopted = { re: new RegExp(stepRegex), format: { template: shape.template, stepRegex } };
    this.candidates.clear();
    return c.pending.flatMap(({ line, ts }) => this.observe(line, ts));
  }

  private count(shape: LineShape, line: string): void {
    let s = this.shapes.get(shape.template);
    const values = shape.numbers.map((n) => n.value);
    if (s === undefined) {
      if (this.shapes.size >= MAX_SHAPES) return;
      s = {
        count: 0,
        example: line.slice(0, EXAMPLE_CHARS),
        shape,
        last: values,
        rose: values.map(() => 0),
        fell: values.map(() => false),
      };
      this.shapes.set(shape.template, s);
    }
    s.count++;
    for (const [i, v] of values.entries()) {
      if (v > s.last[i]!) s.rose[i]!++;
      else if (v < s.last[i]!) s.fell[i] = true;
    }
    s.last = values;
  }
}

/**
 * A `stepRegex` for the most frequent shape with a counter: the integer that rose most often and
 * never fell (not a part of a clock, `12:04:31`) is the step; the number named like a loss, else
 * the first fractional one, the loss.
 */
function suggestRegex(ranked: ShapeCount[]): string | null {
  for (const s of ranked.filter((x) => x.count >= 2)) {
    const nums = s.shape.numbers;
    const clock = (i: number) => s.shape.pieces[i] === ':' || s.shape.pieces[i + 1] === ':';
    let step = -1;
    nums.forEach((n, i) => {
      if (n.integer && s.rose[i]! > 0 && !s.fell[i] && !clock(i) && (step < 0 || s.rose[i]! > s.rose[step]!))
        step = i;
    });
    if (step < 0) continue;
    let loss = nums.findIndex((n, i) => i !== step && n.role === 'loss');
    if (loss < 0) loss = nums.findIndex((n, i) => i !== step && !n.integer);
    if (loss < 0) continue;
    const roles: Array<Role | undefined> = nums.map((n, i) =>
      i === step ? 'step' : i === loss ? 'loss' : n.role === 'step' || n.role === 'loss' ? undefined : n.role,
    );
    return regexOfShape(s.shape, roles);
  }
  return null;
}
