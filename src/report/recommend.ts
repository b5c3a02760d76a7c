/**
 * Recommendations and the conditions of a CONDITIONAL GO, drawn from what the notebook proved:
 * first the flag bisections (the smallest change that makes the failure, and what made no
 * difference), then pairs of cells that differ in exactly one change (one failed, one passed), then
 * what is left open. A flag a bisection showed irrelevant is never suggested as a fix.
 */
import { changesBetween, describeChange } from '../bisect/delta.js';
import type { BisectionRecord, Change } from '../notebook/bisection-record.js';
import { RUN_SPECIFIC } from '../notebook/compare.js';
import type { Cell } from '../notebook/model.js';
import { failureOf, judged, slowGo, stepsOf, stoppedByUser, trialOf } from './cells.js';

export interface RecommendationGroup {
  title: string;
  items: string[];
}

export interface Advice {
  recommendations: RecommendationGroup[];
  /** what a CONDITIONAL GO depends on, one line each */
  conditions: string[];
  /** the env/args settings the evidence says a GO needs, for the decision line */
  settings: string[];
}

/** the good side's setting of a change: what to keep */
export function keepOf(c: Change): string {
  if (c.kind === 'args') return `args \`${c.good || '(none)'}\``;
  if (c.kind === 'arg')
    return c.good === null ? `no \`${c.name}\`` : `\`${c.name}${c.good ? ` ${c.good}` : ''}\``;
  return c.good === null ? `\`${c.name}\` unset` : `\`${c.name}=${c.good}\``;
}

/** the trainer command without what differs every run (run dirs) and the steps */
function script(c: Cell): string {
  const i = c.command.lastIndexOf('--steps');
  const words = i >= 0 ? [...c.command.slice(0, i), ...c.command.slice(i + 2)] : c.command;
  const args = new Set(c.lane.args);
  return words.filter((w) => !RUN_SPECIFIC.test(w) && !args.has(w)).join('\0');
}

/** the changes from `good` to `bad` when the two are siblings (same box, trainer, steps): else null */
export function siblingChanges(bad: Cell, good: Cell): Change[] | null {
  if (bad.target !== good.target || bad.demo !== good.demo || script(bad) !== script(good)) return null;
  if (stepsOf(bad) !== stepsOf(good)) return null;
  return changesBetween({ env: good.env, args: good.lane.args }, { env: bad.env, args: bad.lane.args });
}

const names = (ids: string[]) => ids.map((x) => `\`${x}\``).join(', ');

/** what a bisection proved: its minimal changes and the ones that made no difference */
function proven(b: BisectionRecord) {
  const minimal = b.result?.status === 'found' ? b.result.minimal : [];
  const irrelevant =
    b.result?.status === 'found' && b.result.proven ? b.changes.filter((_c, i) => !minimal.includes(i)) : [];
  return { minimal: minimal.map((i) => b.changes[i]!).filter(Boolean), irrelevant };
}

function fromBisection(b: BisectionRecord): string | null {
  const r = b.result;
  if (!r) return b.state === 'running' ? null : `Bisection ${b.id} did not finish (${b.error ?? b.state}).`;
  const sides = `\`${b.good.lane}\` (GO) and \`${b.bad.lane}\``;
  switch (r.status) {
    case 'found': {
      const { minimal, irrelevant } = proven(b);
      const what = minimal.map(describeChange).join(' + ');
      const alone = minimal.length === 1 ? 'alone is enough' : 'together are needed';
      const rest = irrelevant.length
        ? ` ${names(irrelevant.map((c) => c.name))} made no difference to it: no need to change ${irrelevant.length === 1 ? 'it' : 'them'} for this.`
        : '';
      const proof = r.proven
        ? ''
        : ' (best found within the budget, not proven minimal: a larger `--budget` settles it)';
      // "of the 1 changes" reads wrong: a single change is named as the only one
      const among =
        b.changes.length === 1
          ? `${what}, the one change between ${sides},`
          : `of the ${b.changes.length} changes between ${sides}, ${what}`;
      return `Keep ${minimal.map(keepOf).join(' and ')} (bisection ${b.id}, ${r.runs} run${r.runs === 1 ? '' : 's'}): ${among} ${alone} for its ${b.verdictClass ?? 'failure'}${proof}.${rest}`;
    }
    case 'not-reproduced':
      return b.verdictClass === 'pass'
        ? `Bisection ${b.id}: \`${b.bad.lane}\` passed here, so there was no failure to bisect between ${sides}.`
        : `Bisection ${b.id}: applied to \`${b.good.lane}\`, the env/args changes of \`${b.bad.lane}\` did not reproduce its failure: look at what else differs (command, steps, detector settings, acceptance).`;
    case 'good-fails':
      return `Bisection ${b.id}: its good side \`${b.good.lane}\` is not GO here: make it pass before bisecting against it.`;
    case 'budget':
      return `Bisection ${b.id} ran out of budget after ${r.runs} runs before both sides were known: run it again with a larger \`--budget\`.`;
    case 'uncertain': {
      const top = b.posterior?.culprits[0];
      const who = top ? top.changes.map((i) => b.changes[i]?.name ?? `#${i}`).join(' + ') : 'no change';
      return `Bisection ${b.id} spent its ${r.runs} runs below the confidence asked: the likeliest culprit is ${who} (posterior ${top?.posterior.toFixed(2) ?? '?'}); a larger \`--max-runs\` settles it.`;
    }
  }
}

function crashAdvice(c: Cell): string {
  const sigs = (c.analysis?.signatures ?? []) as Array<{ implies?: string; meaning?: string }>;
  const meaning = sigs.find((s) => s.implies === c.verdict && s.meaning)?.meaning;
  return meaning ? ` (${meaning})` : '';
}

export function adviceFor(cells: Cell[], bisections: BisectionRecord[], nameOf: (c: Cell) => string): Advice {
  const groups: RecommendationGroup[] = [];
  const conditions: string[] = [];
  const settings: string[] = [];
  const nb = { bisections };

  const fromB = bisections.map(fromBisection).filter((x): x is string => x !== null);
  if (fromB.length) groups.push({ title: 'From the flag bisection', items: fromB });
  const bisected = new Set<string>();
  const irrelevant = new Set<string>();
  for (const b of bisections) {
    const p = proven(b);
    for (const c of p.minimal) {
      bisected.add(c.name);
      settings.push(keepOf(c));
      conditions.push(
        `${keepOf(c)}: without it \`${b.bad.lane}\`'s ${b.verdictClass ?? 'failure'} comes back (bisection ${b.id}).`,
      );
    }
    for (const c of p.irrelevant) irrelevant.add(c.name);
  }

  // pairs of cells that differ in one change, one NO-GO, one GO: the change is a tested fix
  const failed = cells.filter((c) => judged(c) && !c.go && !trialOf(nb, c));
  const passed = cells.filter((c) => judged(c) && c.go);
  const fixes = new Map<string, { change: Change; byBad: Map<Cell, Cell[]> }>();
  const open: Cell[] = [];
  const closestOf = new Map<Cell, { good: Cell; changes: Change[] }>();
  for (const bad of failed) {
    let fixed = false;
    let closest: { good: Cell; changes: Change[] } | null = null;
    for (const good of passed) {
      const changes = siblingChanges(bad, good);
      if (!changes || changes.length === 0) continue;
      if (!closest || changes.length < closest.changes.length) closest = { good, changes };
      const one = changes.length === 1 ? changes[0]! : null;
      if (!one || irrelevant.has(one.name)) continue;
      fixed = true;
      const key = keepOf(one);
      const entry = fixes.get(key) ?? { change: one, byBad: new Map() };
      entry.byBad.set(bad, [...(entry.byBad.get(bad) ?? []), good]);
      fixes.set(key, entry);
    }
    if (!fixed) open.push(bad);
    if (closest) closestOf.set(bad, closest);
  }
  const sib = [...fixes].map(([key, f]) => {
    const agrees = bisected.has(f.change.name) ? ' This agrees with the bisection.' : '';
    const lines = [...f.byBad].map(([bad, goods]) => {
      const g = goods.map(nameOf);
      const them =
        g.length === 1
          ? `${g[0]}, which differs from it only in this,`
          : `${g.slice(0, -1).join(', ')} and ${g[g.length - 1]}, which differ from it only in this,`;
      return `${nameOf(bad)} fails (${failureOf(bad)})${bad.summary?.crash ? crashAdvice(bad) : ''}; ${them} passed`;
    });
    if (!bisected.has(f.change.name)) {
      settings.push(key);
      const n = f.byBad.size;
      conditions.push(
        `${key}: ${n === 1 ? 'the cell' : `the ${n} cells`} that differ${n === 1 ? 's' : ''} from a GO only in it fail${n === 1 ? 's' : ''}.`,
      );
    }
    return `${key}: ${lines.join('; ')}.${agrees}`;
  });
  if (sib.length) groups.push({ title: 'From cells that differ in one change', items: sib });

  const openItems = open.map((c) => {
    const closest = closestOf.get(c);
    const near = closest
      ? ` No passing cell differs from it in one change (closest: ${nameOf(closest.good)}, ${closest.changes.length} change${closest.changes.length === 1 ? '' : 's'}: ${closest.changes.map((x) => x.name).join(', ')}): make one with the env editor (\`e\`) to test a fix.`
      : ' No passing cell is comparable to it: make one with the env editor (`e`).';
    const what = c.summary?.nan
      ? ' Keep this precision/config out of production.'
      : c.summary?.crash
        ? ` Fix the ${c.summary.crash.exception}${c.summary.crash.where ? ` in ${c.summary.crash.where.replace(/\((?:[^()]*\/)?([^()/]+)\)$/, '($1)')}` : ''}${crashAdvice(c)}.`
        : '';
    conditions.push(`${nameOf(c)} is NO-GO with no tested fix: ${failureOf(c)}.`);
    return `${nameOf(c)}: ${failureOf(c)}.${what}${near}`;
  });
  for (const c of cells.filter(stoppedByUser)) {
    openItems.push(`${nameOf(c)} was stopped by the user before its verdict: re-run it (\`r\`) to judge it.`);
    conditions.push(`${nameOf(c)} was stopped before its verdict: not judged.`);
  }
  for (const c of cells.filter((x) => x.state === 'running'))
    conditions.push(`${nameOf(c)} is still running.`);
  if (openItems.length) groups.push({ title: 'Still open', items: openItems });

  const slow = cells.flatMap((c) => {
    const why = slowGo(c);
    return why ? [{ c, why }] : [];
  });
  if (slow.length) {
    groups.push({
      title: 'Performance',
      items: slow.map(
        ({ c, why }) =>
          `${nameOf(c)} is GO but slow (${why}): find where the time goes with \`s\` (hot frames) in its dashboard before a long run.`,
      ),
    });
    for (const { c, why } of slow) conditions.push(`${nameOf(c)} passed, but slow: ${why}.`);
  }
  if (groups.length === 0 && passed.length)
    groups.push({
      title: 'Next',
      items: ['All configurations met their acceptance: continue to a longer run.'],
    });
  if (passed.length === 0 && cells.some(judged))
    groups.push({ title: 'Next', items: ['No configuration passed: do not proceed to production runs.'] });
  return { recommendations: groups, conditions, settings: [...new Set(settings)] };
}
