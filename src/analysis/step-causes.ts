/**
 * What a step spent its extra time on, when the trainer said so: the lines it printed between the
 * previous step line and this one. nanoGPT prints `step 50: train loss …, val loss …` and
 * `saving checkpoint to out` before `iter 50: …, time 353ms`, so that step's time holds an
 * evaluation. Only a few words are kept per step (and only for steps whose lines said something),
 * so a run of millions of steps keeps a few thousand entries at most.
 */

/** a periodic cause, as one step (`one`) and as a group (`many`) */
export interface Cause {
  one: string;
  many: string;
}

const CAUSES: Array<Cause & { pattern: RegExp }> = [
  // nanoGPT's `val loss`, HF's `eval_loss`, `Evaluating…`, `validation`
  {
    one: 'evaluation',
    many: 'evaluations',
    pattern: /\bval(?:idation)?[ _-]?loss\b|\beval(?:uat\w*)?\b|\bvalidation\b/i,
  },
  {
    one: 'checkpoint save',
    many: 'checkpoint saves',
    pattern: /\bcheckpoint\b|\bsav(?:e|ing) (?:the )?model\b/i,
  },
];

/** steps remembered at most: beyond, the oldest are dropped (a run evaluating every step) */
const MAX_STEPS = 4096;

/** every pattern above needs one of these: most lines are turned away by this one cheap test */
const MAYBE = /val|checkpoint|sav/i;

/** the cause a printed line names, if any */
export function causeOfLine(text: string): Cause | null {
  if (!MAYBE.test(text)) return null;
  const c = CAUSES.find((x) => x.pattern.test(text));
  return c ? { one: c.one, many: c.many } : null;
}

/** the plural of a cause named by its singular (what a result or a notebook keeps) */
export function causeNamed(one: string): Cause | null {
  const c = CAUSES.find((x) => x.one === one);
  return c ? { one: c.one, many: c.many } : null;
}

/**
 * Fed the output lines in order and told when a step line was read: the first cause named by the
 * lines before a step line is that step's.
 */
export class StepCauses {
  private readonly byStep = new Map<number, string>();
  /** the cause of the lines read since the last step line */
  private pending: string | null = null;
  /** the newest line's cause, until it is known not to be a step line itself */
  private last: string | null = null;

  /** a line of the output, before the events it gives */
  line(text: string): void {
    if (this.last !== null && this.pending === null) this.pending = this.last;
    this.last = causeOfLine(text)?.one ?? null;
  }

  /** the line just read was step `step`'s line */
  step(step: number): void {
    this.last = null;
    if (this.pending === null) return;
    if (!this.byStep.has(step)) {
      this.byStep.set(step, this.pending);
      if (this.byStep.size > MAX_STEPS) this.byStep.delete(this.byStep.keys().next().value!);
    }
    this.pending = null;
  }

  /** the causes of the given steps, those that have one: `{ "50": "evaluation" }` */
  of(steps: Iterable<number>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const s of steps) {
      const c = this.byStep.get(s);
      if (c !== undefined) out[String(s)] = c;
    }
    return out;
  }
}
