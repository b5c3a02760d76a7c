/**
 * The notebook's status line for the cell that runs: its step, loss, toks/s and any suspicion or
 * stall, read from the same snapshot its dashboard shows. Pure: one snapshot in, one line out.
 */
import type { DashboardState } from '../session/state.js';
import { rateText } from '../util/rate.js';

/** verdicts of a live run that need attention, as the dashboard's banner names them */
const ATTENTION: Record<string, string> = { suspect: 'SUSPECT', hang: 'HANG', busy: 'BUSY' };

const last = (points: DashboardState['loss']) => points[points.length - 1]?.value;

/** "c3 batched-prefill · step 4/8 · loss 5.6825 · 83 toks/s · SUSPECT: silent 3 s at step 5 …" */
export function liveLine(id: string, lane: string, s: DashboardState): string {
  const parts = [`${id} ${lane}`];
  if (s.runState === 'starting' || (s.runState === 'idle' && !s.runId)) parts.push('starting');
  else {
    const done = s.stepsDone ?? s.step;
    parts.push(`step ${done}${s.totalSteps ? `/${s.totalSteps}` : ''}`);
    const loss = last(s.loss);
    if (loss !== undefined) parts.push(`loss ${Number.isFinite(loss) ? loss.toFixed(4) : String(loss)}`);
    const toks = last(s.toks);
    if (toks !== undefined) parts.push(`${rateText(toks)} toks/s`);
    if (s.runState === 'stopping') parts.push('stopping');
    if (s.runState === 'exited') parts.push('ended, writing its verdict');
  }
  const v = s.verdict;
  const word = v ? ATTENTION[v.verdict] : undefined;
  if (v && word && s.runState !== 'exited') {
    // "suspect: silent 3 s at …" reads "SUSPECT: silent 3 s at …", not "SUSPECT: suspect: …"
    const summary = v.summary.replace(new RegExp(`^${v.verdict}:\\s*`, 'i'), '');
    parts.push(`${word}: ${summary}`);
  }
  return parts.join(' · ');
}
