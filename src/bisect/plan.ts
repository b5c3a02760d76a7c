/**
 * From two lanes (`nsa-dbg bisect`) or two marked cells (`:bisect`) to a bisection plan: the two
 * sides, the lane trials run from, the detector settings they are judged with and the trial key.
 *
 * Trials are the good lane with the changes applied; they are judged with the bad lane's detector
 * settings over the good lane's (a lane made to show a failure can carry quick confirm settings, so
 * a stuck trial is stopped in seconds), and `--detector` over both.
 */

import type { DetectorSettings, Lane } from '../lanes/lane.js';
import { LaneSet } from '../lanes/load.js';
import type { Cell } from '../notebook/model.js';
import { MASK } from '../notebook/secrets.js';
import { changesBetween, type Side } from './delta.js';
import { trialKey } from './key.js';
import type { BisectPlan } from './runner.js';
import { classOf } from './summary.js';

/** `target`: where trials run, as cells record it; the search's settings as the plan takes them */
export interface PlanOptions
  extends Pick<BisectPlan, 'target' | 'steps' | 'budget' | 'repeat' | 'confidence' | 'maxRuns'> {
  /** what else of the target decides how a run goes (a Slurm job's nodes) */
  launchKey?: Record<string, unknown>;
  demo: boolean;
  stepMs?: number;
  command?: string[];
  detector?: DetectorSettings;
}

export interface Planned {
  plan: BisectPlan;
  /** the lane trials start from, and what a trial replaces of it besides env and args */
  lane: string;
  trial: { demoEnv: Record<string, string>; detector: DetectorSettings };
}

/** a lane's env as the trainer gets it (the demo's own knobs included) */
export function sideOfLane(p: Lane, demo: boolean): Side {
  return { env: demo ? { ...p.env, ...p.demoEnv } : { ...p.env }, args: [...p.args] };
}

function plan(
  good: { lane: Lane; side: Side; cell?: Cell },
  bad: { name: string; lane?: Lane; side: Side; cell?: Cell },
  o: PlanOptions,
): Planned | { error: string } {
  if (changesBetween(good.side, bad.side).length === 0)
    return { error: `${good.lane.name} and ${bad.name} have the same env and args: nothing to bisect` };
  const detector = { ...good.lane.detector, ...bad.lane?.detector, ...o.detector };
  // env is resolved already (demo knobs included), so the lane's demo env is not applied again
  const trialLane = { ...good.lane, demoEnv: {}, detector };
  return {
    lane: good.lane.name,
    trial: { demoEnv: {}, detector },
    plan: {
      good: { lane: good.lane.name, side: good.side, ...(good.cell ? { cell: good.cell } : {}) },
      bad: { lane: bad.name, side: bad.side, ...(bad.cell ? { cell: bad.cell } : {}) },
      keyOf: (side) =>
        trialKey({
          side,
          lane: trialLane,
          command: o.command,
          steps: o.steps,
          demo: o.demo,
          stepMs: o.stepMs,
          target: o.target,
          ...(o.launchKey ? { launch: o.launchKey } : {}),
        }),
      target: o.target,
      steps: o.steps,
      budget: o.budget,
      repeat: o.repeat,
      confidence: o.confidence,
      maxRuns: o.maxRuns,
    },
  };
}

/** why a lane whose file is broken cannot be used (its file, field and position), or undefined */
function brokenLane(lanes: Map<string, Lane>, name: string): string | undefined {
  return lanes instanceof LaneSet ? lanes.brokenByName.get(name)?.error.message : undefined;
}

export function planFromLanes(
  lanes: Map<string, Lane>,
  goodName: string,
  badName: string,
  o: PlanOptions,
): Planned | { error: string } {
  const known = (name: string) => lanes.get(name) ?? brokenLane(lanes, name);
  const good = known(goodName);
  const bad = known(badName);
  if (typeof good === 'string') return { error: good };
  if (typeof bad === 'string') return { error: bad };
  if (!good) return { error: `unknown lane "${goodName}" (see nsa-dbg lanes)` };
  if (!bad) return { error: `unknown lane "${badName}" (see nsa-dbg lanes)` };
  return plan(
    { lane: good, side: sideOfLane(good, o.demo) },
    { name: bad.name, lane: bad, side: sideOfLane(bad, o.demo) },
    o,
  );
}

/**
 * A cell's env as a side: its run dir put back as `{runDir}` (a new run gets its own), and a masked
 * secret taken from its lane as it is now (the notebook never stored the value).
 */
export function sideOfCell(c: Cell, lane: Lane | undefined, demo: boolean): Side {
  const fromLane = lane ? sideOfLane(lane, demo).env : {};
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(c.env)) {
    if (v === MASK) {
      if (fromLane[k] !== undefined) env[k] = fromLane[k];
      continue;
    }
    env[k] = c.runDir ? v.split(c.runDir).join('{runDir}') : v;
  }
  return { env, args: [...c.lane.args] };
}

/** `:bisect` on two marked cells: the GO one is good (the clean pass, when both are GO) */
export function planFromCells(
  lanes: Map<string, Lane>,
  a: Cell,
  b: Cell,
  o: Omit<PlanOptions, 'demo'>,
): Planned | { error: string } {
  for (const c of [a, b])
    if (c.state !== 'done') return { error: `${c.id} has no verdict yet: bisect two finished cells` };
  const rank = (c: Cell) => ({ pass: 0, slow: 1 })[classOf(c)] ?? 2;
  const [good, bad] = rank(a) <= rank(b) ? [a, b] : [b, a];
  if (rank(good) === rank(bad) || rank(good) === 2)
    return {
      error: `bisect needs a GO cell and a NO-GO (or slow) one: ${a.id} is ${classOf(a)}, ${b.id} is ${classOf(b)}`,
    };
  const goodLane = lanes.get(good.lane.name);
  if (!goodLane) return { error: `${good.id}'s lane ${good.lane.name} is not known any more` };
  if (good.demo !== bad.demo)
    return { error: `${good.id} and ${bad.id} ran different trainers (demo vs not)` };
  const badLane = lanes.get(bad.lane.name);
  return plan(
    { lane: goodLane, side: sideOfCell(good, goodLane, good.demo), cell: good },
    { name: bad.lane.name, lane: badLane, side: sideOfCell(bad, badLane, bad.demo), cell: bad },
    { ...o, demo: good.demo },
  );
}
