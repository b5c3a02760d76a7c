/**
 * The search space of a bisection: one change per env variable that differs between the good and
 * the bad side (set, unset or changed), and one per trainer option that differs (`--precision
 * fp16`). Args that are not plain `--name [value]` options (positionals, repeated options) are one
 * change as a whole, since no part of them can be applied alone with a known meaning.
 */
import type { Change } from '../notebook/bisection-record.js';
import { shQuote } from '../util/sh-quote.js';

export interface Side {
  env: Record<string, string>;
  args: string[];
}

type Options = Array<[string, string | null]>;

/** `--a 1 --b --c x` → [[--a, 1], [--b, null], [--c, x]]; null when not that shape */
export function parseOptions(args: readonly string[]): Options | null {
  const out: Options = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('-')) return null;
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (out.some(([n]) => n === name)) return null;
    if (eq > 0) out.push([name, a.slice(eq + 1)]);
    else if (i + 1 < args.length && !args[i + 1]!.startsWith('-')) out.push([name, args[++i]!]);
    else out.push([name, null]);
  }
  return out;
}

function toArgs(opts: Options): string[] {
  return opts.flatMap(([n, v]) => (v === null ? [n] : [n, v]));
}

/** The changes that turn `good` into `bad`, env first, each group by name. */
export function changesBetween(good: Side, bad: Side): Change[] {
  const out: Change[] = [];
  const names = [...new Set([...Object.keys(good.env), ...Object.keys(bad.env)])].sort();
  for (const name of names) {
    const g = good.env[name] ?? null;
    const b = bad.env[name] ?? null;
    if (g !== b) out.push({ kind: 'env', name, good: g, bad: b });
  }
  if (good.args.join('\0') === bad.args.join('\0')) return out;
  const go = parseOptions(good.args);
  const bo = parseOptions(bad.args);
  if (!go || !bo) {
    out.push({
      kind: 'args',
      name: 'args',
      good: good.args.map(shQuote).join(' '),
      bad: bad.args.map(shQuote).join(' '),
      argv: { good: [...good.args], bad: [...bad.args] },
    });
    return out;
  }
  const gm = new Map(go);
  const bm = new Map(bo);
  const optNames = [...new Set([...gm.keys(), ...bm.keys()])].sort();
  for (const name of optNames) {
    // '' stands for "present without a value", so absence (null) stays distinct
    const g = gm.has(name) ? (gm.get(name) ?? '') : null;
    const b = bm.has(name) ? (bm.get(name) ?? '') : null;
    if (g !== b) out.push({ kind: 'arg', name, good: g, bad: b });
  }
  return out;
}

/** the good side with `changes` applied */
export function applyChanges(good: Side, changes: readonly Change[]): Side {
  const env = { ...good.env };
  let args = [...good.args];
  const whole = changes.find((c) => c.kind === 'args');
  if (whole?.argv) args = [...whole.argv.bad];
  const argChanges = changes.filter((c) => c.kind === 'arg');
  if (argChanges.length) {
    const opts = parseOptions(args) ?? [];
    for (const c of argChanges) {
      const value = c.bad === '' ? null : c.bad;
      const at = opts.findIndex(([n]) => n === c.name);
      if (c.bad === null) {
        if (at >= 0) opts.splice(at, 1);
      } else if (at >= 0) opts[at] = [c.name, value];
      else opts.push([c.name, value]);
    }
    args = toArgs(opts);
  }
  for (const c of changes) {
    if (c.kind !== 'env') continue;
    if (c.bad === null) delete env[c.name];
    else env[c.name] = c.bad;
  }
  return { env, args };
}

/** "NSA_PREFILL_BATCHED unset", "NSA_NVTX=1", "NSA_SEL_RANGES_V2 1→0", "--precision fp16" */
export function describeChange(c: Change): string {
  if (c.kind === 'args') return `args: ${c.bad || '(none)'}`;
  if (c.kind === 'arg') {
    if (c.bad === null) return `${c.name} dropped`;
    if (c.good === null) return c.bad === '' ? c.name : `${c.name} ${c.bad}`;
    return `${c.name} ${c.good || '(flag)'}→${c.bad || '(flag)'}`;
  }
  if (c.bad === null) return `${c.name} unset`;
  if (c.good === null) return `${c.name}=${c.bad}`;
  return `${c.name} ${c.good}→${c.bad}`;
}
