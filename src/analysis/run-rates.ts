/**
 * A run's rates as the verdict states them: toks/s where the trainer prints it, the step time
 * always where steps have a duration (the trainer's own measure, else arrivals over the logging
 * interval), and the note for output in which no step line was recognised.
 */
import type { OutputShapes } from '../ingest/step-shape-learner.js';
import { rateText } from '../util/rate.js';
import type { EvidenceState } from './evidence-state.js';
import type { Throughput } from './result.js';

/** three significant figures: a step time of 0.02852 s, not 0.028519999 */
const sig3 = (v: number) => Number(v.toPrecision(3));

export function throughputOf(s: EvidenceState): Throughput | null {
  const out: Throughput = {};
  // nsa-vibe's toks/s is already the sum over ranks (printed by rank 0): use one rank, the lowest
  const ranks = [...s.steps.keys()].sort((a, b) => a - b);
  for (const rank of ranks) {
    const med = s.steps.get(rank)!.medianToks();
    if (med === null) continue;
    out.medianToksPerS = Math.round(med * 10) / 10;
    break;
  }
  for (const rank of ranks) {
    const t = s.steps.get(rank)!.stepTimes();
    if (t === null) continue;
    out.medianStepS = sig3(t.median);
    out.p95StepS = sig3(t.p95);
    break;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** the run's rate in words: toks/s where the trainer prints it, else the step time */
export function rateSummary(t: Throughput | null): string {
  if (t?.medianToksPerS !== undefined) return `median ${rateText(t.medianToksPerS)} toks/s`;
  if (t?.medianStepS !== undefined) return `median ${stepTimeText(t.medianStepS)}/step`;
  return 'no rate known';
}

export function stepTimeText(seconds: number): string {
  return seconds < 1 ? `${sig3(seconds * 1000)} ms` : `${sig3(seconds)} s`;
}

/** the note for output in which no line was read as a step: what the lines look like, and a regex */
export function unrecognisedNote(u: OutputShapes): string {
  const shapes = u.shapes.map((x) => `"${x.template}" ×${x.count}`).join(', ');
  const fix =
    u.stepRegex === null
      ? 'no line carries a step counter and a number to read as its loss'
      : `a lane stepRegex that would read them: ${u.stepRegex}`;
  return `no line was recognised as a training step (${u.lines} lines read${shapes ? `; most frequent shapes: ${shapes}` : ''}); ${fix}`;
}
