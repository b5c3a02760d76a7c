/**
 * The shape of an output line: its text with every number replaced by `#`, and the role each number
 * plays, read from the word next to it (`iter 30: train loss 3.70` → step 30, loss 3.70). This is
 * how a trainer nobody wrote a parser for is understood: lines of one shape whose step-like integer
 * increases and that carry a loss-like number are its step lines (step-shape-learner.ts).
 */

export type Role = 'step' | 'total' | 'loss' | 'lr' | 'ms' | 's' | 'toks' | 'other';

export interface ShapeNumber {
  text: string;
  value: number;
  integer: boolean;
  role: Role;
}

export interface LineShape {
  /** the line with each number as `#` */
  template: string;
  /** the literal text around the numbers (template split at `#`), numbers.length + 1 pieces */
  pieces: string[];
  numbers: ShapeNumber[];
}

/** longest line whose shape is read: step lines are short; a long line is a dump, a config, a table */
export const MAX_SHAPE_CHARS = 400;

const NUMBER = /(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b/gi;
const WORD_BEFORE = /([A-Za-z_][\w/.-]*)[^A-Za-z0-9_]*$/;
const STEP_WORD = /^(?:global_?step|steps?|iters?|iterations?|it|batch(?:es)?|updates?|optimizer_steps?)$/;
const LOSS_WORD = /(?:^|_|\/)(?:train_?)?loss$|^(?:nll|ce)$|^lm$/;
const LR_WORD = /^(?:lr|learning_rate)$/;
const TIME_WORD = /^(?:time|dt|iter_dt|iter_time|step_time|elapsed|duration|t)$/;
const TOKS_AFTER = /^\s*(?:tok(?:en)?s?\/s(?:ec)?|tps)\b/i;
const TOKS_WORD = /^(?:tok(?:en)?s?\/s(?:ec)?|tps|tokens_per_s(?:ec)?|throughput)$/;

function roleOf(
  word: string,
  after: string,
  integer: boolean,
  prevRole: Role | undefined,
  pre: string,
): Role {
  if (prevRole === 'step' && /^\s*\/\s*$/.test(pre)) return 'total';
  if (TOKS_AFTER.test(after)) return 'toks';
  const w = word.toLowerCase();
  if (integer && STEP_WORD.test(w)) return 'step';
  if (LOSS_WORD.test(w)) return 'loss';
  if (LR_WORD.test(w)) return 'lr';
  if (TOKS_WORD.test(w)) return 'toks';
  // a unit after the number says it is a time: `41.7 ms/it`, `28.5ms`, `1.2 s/step`
  if (/^\s*ms(?:\/(?:it|iter|step|batch))?\b/.test(after)) return 'ms';
  if (/^\s*s(?:ec)?\/(?:it|iter|step|batch)\b/.test(after)) return 's';
  if (w === 'ms') return 'ms';
  if (TIME_WORD.test(w) || w.endsWith('_dt')) return /^\s*ms\b/.test(after) ? 'ms' : 's';
  return 'other';
}

/** The line's shape; null for a line too long to be a step line or with no numbers. */
export function shapeOf(line: string): LineShape | null {
  if (line.length > MAX_SHAPE_CHARS) return null;
  const pieces: string[] = [];
  const numbers: ShapeNumber[] = [];
  let last = 0;
  // the first of each: `loss 2.1 (avg loss 2.3)` names one loss
  const taken = new Set<Role>();
  for (const m of line.matchAll(NUMBER)) {
    const start = m.index;
    const pre = line.slice(last, start);
    const text = m[0];
    // Number() reads every text NUMBER matches but `inf` (a sign before it is not part of the match)
    const value = text.toLowerCase() === 'inf' ? Infinity : Number(text);
    const integer = /^[-+]?\d+$/.test(text);
    const before = WORD_BEFORE.exec(line.slice(Math.max(0, start - 40), start))?.[1] ?? '';
    let role = roleOf(
      before,
      line.slice(start + text.length, start + text.length + 12),
      integer,
      numbers.at(-1)?.role,
      pre,
    );
    if ((role === 'step' || role === 'loss') && taken.has(role)) role = 'other';
    taken.add(role);
    pieces.push(pre);
    numbers.push({ text, value, integer, role });
    last = start + text.length;
  }
  if (numbers.length === 0) return null;
  pieces.push(line.slice(last));
  return { template: pieces.join('#'), pieces, numbers };
}

const ESCAPE = /[.*+?^${}()|[\]\\]/g;
const NUM_PATTERN = '[-+]?[\\d.]+(?:[eE][-+]?\\d+)?|nan|-?inf';
/** a number that is read past, not captured */
const ANY_NUMBER = '[-+]?[\\d.]+(?:[eE][-+]?\\d+)?';

/**
 * A regex for lines of this shape, with the named groups a lane's `stepRegex` takes (`step`, `loss`,
 * `lr`, `toks`, `ms`, `s`); runs of spaces match any run (columns padded to width).
 */
export function regexOfShape(
  shape: LineShape,
  roles: Array<Role | undefined> = shape.numbers.map((n) => n.role),
): string {
  const lit = (s: string) => s.replace(ESCAPE, '\\$&').replace(/\s+/g, '\\s+');
  let out = `^${lit(shape.pieces[0]!)}`;
  roles.forEach((role, i) => {
    const name = role === undefined || role === 'other' || role === 'total' ? null : role;
    if (name === null) out += ANY_NUMBER;
    else out += `(?<${name}>${role === 'step' ? '\\d+' : NUM_PATTERN})`;
    out += lit(shape.pieces[i + 1]!);
  });
  return `${out.replace(/(?:\\s\+)+$/, '')}\\s*$`;
}
