/**
 * Slow steps and stack dumps summarised for a person: the routine ones grouped, the finding left
 * standing. nanoGPT evaluating every 50 steps makes every 50th step slow (0.3–0.6 s against a
 * median of 0.1 s); listed one by one, 19 of them bury the one step that took 78.6 s. So: steps of
 * one cause (the output said "val loss" before them), or on one grid (the same interval apart),
 * become one line; a member far longer than the rest of its group stays a finding of its own. And
 * a hang sampled 18 times leaves 18 dumps of the same place: one line with a count.
 */
import type { Frame } from '../ingest/events.js';
import type { DumpReport } from './result.js';
import { causeNamed } from './step-causes.js';
import { median, type SlowStep } from './step-stats.js';

/** one slow step, its ranks together */
export interface SlowAt {
  step: number;
  /** the longest of its ranks' */
  seconds: number;
  medianSeconds: number;
  ranks: number[];
  /** what the output said the step did ("evaluation"), when it said */
  cause?: string;
}

export interface SlowGroup {
  /** the cause in the plural ("evaluations"), or null for steps that only share a grid */
  cause: string | null;
  steps: number[];
  ranks: number[];
  minS: number;
  maxS: number;
  /** the interval they repeat at (the steps' common divisor of their gaps), when ≥ 2 */
  every: number | null;
}

export interface SlowSummary {
  /** the slow steps that stand out, longest first */
  findings: SlowAt[];
  /** the routine ones */
  groups: SlowGroup[];
}

/** fewer uncaused steps than this on one grid are no pattern */
const MIN_GRID = 3;
/** a member this many times its group's median is a finding of its own (a stall in an eval step) */
const OUTLIER = 3;

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** the interval of steps that repeat: the common divisor of their gaps, when it is at least 2 */
export function periodOf(steps: number[]): number | null {
  let g = 0;
  for (let i = 1; i < steps.length; i++) g = gcd(g, steps[i]! - steps[i - 1]!);
  return g >= 2 ? g : null;
}

/** slow steps by step, their ranks merged */
function byStep(slow: SlowStep[], causes: Record<string, string>): SlowAt[] {
  const at = new Map<number, SlowAt>();
  for (const s of slow) {
    const a = at.get(s.step);
    if (a) {
      a.seconds = Math.max(a.seconds, s.seconds);
      a.medianSeconds = Math.max(a.medianSeconds, s.medianSeconds);
      if (!a.ranks.includes(s.rank)) a.ranks.push(s.rank);
      continue;
    }
    const cause = causes[String(s.step)];
    at.set(s.step, {
      step: s.step,
      seconds: s.seconds,
      medianSeconds: s.medianSeconds,
      ranks: [s.rank],
      ...(cause ? { cause } : {}),
    });
  }
  return [...at.values()].sort((a, b) => a.step - b.step);
}

/** the largest set of steps on one grid (interval, offset), the gaps that recur most tried first */
function onOneGrid(steps: SlowAt[]): SlowAt[] {
  const gaps = new Map<number, number>();
  for (let i = 1; i < steps.length; i++) {
    const d = steps[i]!.step - steps[i - 1]!.step;
    if (d >= 2) gaps.set(d, (gaps.get(d) ?? 0) + 1);
  }
  let best: SlowAt[] = [];
  for (const [d, n] of gaps) {
    if (n < MIN_GRID - 1) continue;
    const byOffset = new Map<number, SlowAt[]>();
    for (const s of steps) byOffset.set(s.step % d, [...(byOffset.get(s.step % d) ?? []), s]);
    for (const members of byOffset.values()) if (members.length > best.length) best = members;
  }
  return best.length >= MIN_GRID ? best : [];
}

function groupOf(members: SlowAt[], cause: string | null): SlowGroup {
  const steps = members.map((m) => m.step);
  const seconds = members.map((m) => m.seconds);
  return {
    cause,
    steps,
    ranks: [...new Set(members.flatMap((m) => m.ranks))].sort((a, b) => a - b),
    minS: Math.min(...seconds),
    maxS: Math.max(...seconds),
    every: periodOf(steps),
  };
}

/**
 * The slow steps as findings and routine groups. `causes`: what the output said steps did
 * (step-causes.ts), by step.
 */
export function summariseSlowSteps(slow: SlowStep[], causes: Record<string, string> = {}): SlowSummary {
  const all = byStep(slow, causes);
  const findings: SlowAt[] = [];
  const groups: SlowGroup[] = [];
  const take = (members: SlowAt[], cause: string | null) => {
    const med = median(members.map((m) => m.seconds)) ?? 0;
    const routine = members.filter((m) => m.seconds <= OUTLIER * med);
    findings.push(...members.filter((m) => m.seconds > OUTLIER * med));
    if (routine.length > 0) groups.push(groupOf(routine, cause));
  };
  // steps the output named: one group per cause, two of them are already a pattern
  const named = new Map<string, SlowAt[]>();
  for (const s of all) if (s.cause) named.set(s.cause, [...(named.get(s.cause) ?? []), s]);
  for (const [one, members] of named) {
    if (members.length >= 2) take(members, causeNamed(one)?.many ?? `${one}s`);
    else findings.push(...members);
  }
  const rest = all.filter((s) => !s.cause);
  const grid = onOneGrid(rest);
  if (grid.length) take(grid, null);
  findings.push(...rest.filter((s) => !grid.includes(s)));
  findings.sort((a, b) => b.seconds - a.seconds || a.step - b.step);
  return { findings, groups };
}

const secs = (v: number) => v.toFixed(1);
const ranksText = (ranks: number[]) => (ranks.length === 1 ? `rank ${ranks[0]}` : `ranks ${ranks.join(',')}`);

/** "rank 0, step 572: 78.6 s (median 0.1 s)" and what the step did, when known */
export function slowStepText(s: SlowAt): string {
  const during = s.cause ? `, during ${/^[aeiou]/.test(s.cause) ? 'an' : 'a'} ${s.cause}` : '';
  return `${ranksText(s.ranks)}, step ${s.step}: ${secs(s.seconds)} s (median ${secs(s.medianSeconds)} s)${during}`;
}

/** "12 more slow steps, 0.3–0.9 s": the findings past those spelled out (they are sorted longest first) */
export function moreText(rest: SlowAt[]): string {
  const s = rest.map((x) => x.seconds);
  const lo = secs(Math.min(...s));
  const hi = secs(Math.max(...s));
  return `${rest.length} more slow step${rest.length === 1 ? '' : 's'}, ${lo === hi ? lo : `${lo}–${hi}`} s`;
}

/** "19 evaluations, 0.3–0.6 s, every 50 steps (steps 0–900, rank 0)" */
export function slowGroupText(g: SlowGroup): string {
  const n = g.steps.length;
  const what = g.cause ?? `slow step${n === 1 ? '' : 's'}`;
  const range = secs(g.minS) === secs(g.maxS) ? `${secs(g.minS)} s` : `${secs(g.minS)}–${secs(g.maxS)} s`;
  const span = n === 1 ? `step ${g.steps[0]}` : `steps ${g.steps[0]}–${g.steps[n - 1]}`;
  return `${n} ${what}, ${range}${g.every ? `, every ${g.every} steps` : ''} (${span}, ${ranksText(g.ranks)})`;
}

/** dumps of one place, in the order their first was read */
export interface DumpGroup {
  first: DumpReport;
  last: DumpReport;
  count: number;
  /** how they were taken (nsa-dbg's faulthandler hook, the trainer's SIGUSR1 handler, …) */
  kinds: Array<{ kind: DumpReport['kind']; signal?: number; count: number }>;
}

const frameKey = (f: Frame | null | undefined) => (f ? `${f.file}:${f.line}:${f.function}` : '');

/**
 * Dumps of one place (same rank, same innermost frame and user frame) collapsed, with how many
 * there were and how they were taken: a hang checked for 30 s leaves a dump from nsa-dbg's hook and
 * one from the trainer's handler at each check, all of the same line.
 */
export function groupDumps(dumps: DumpReport[]): DumpGroup[] {
  const by = new Map<string, DumpGroup>();
  for (const d of dumps) {
    const key = [d.rank ?? '', frameKey(d.mainThreadTop), frameKey(d.mainThreadUserTop)].join('\u0000');
    const g = by.get(key) ?? { first: d, last: d, count: 0, kinds: [] };
    g.count++;
    g.last = d;
    const k = g.kinds.find((x) => x.kind === d.kind && x.signal === d.signal);
    if (k) k.count++;
    else g.kinds.push({ kind: d.kind, ...(d.signal === undefined ? {} : { signal: d.signal }), count: 1 });
    by.set(key, g);
  }
  return [...by.values()];
}
