import type { StopStep } from '../runs/stop.js';

/** The stop ladder in progress: which step was taken when, and how long until the next. */
export interface StopLadder {
  step: StopStep;
  atMs: number;
  /** seconds from `atMs` to the next step; null after SIGKILL */
  nextInS: number | null;
}

/** "stopping: SIGINT sent 3 s ago; SIGKILL in 7 s (q again: kill now)" */
export function stopText(s: StopLadder, now: number): string {
  const ago = Math.max(0, Math.round((now - s.atMs) / 1000));
  const sent = s.step === 'halt' ? 'wrote .HALT' : s.step === 'sigint' ? 'SIGINT sent' : 'SIGKILL sent';
  if (s.nextInS === null) return `stopping: ${sent} ${ago} s ago`;
  const next = s.step === 'halt' ? 'SIGINT' : 'SIGKILL';
  const left = Math.max(0, Math.round(s.nextInS - (now - s.atMs) / 1000));
  return `stopping: ${sent} ${ago} s ago; ${next} in ${left} s (q again: kill now)`;
}
