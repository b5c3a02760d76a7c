/**
 * The proof that a run's flags took effect: the env (and options) each rank's process started with,
 * as the kernel holds them, against what the run was meant to have. A wrapper that resets the env,
 * `env -u`, a launcher dropping a variable: the run then tests something else, and this says what
 * the process saw instead. Pure: the session reads /proc, this compares.
 */
import { isSecretName, MASK } from './secrets.js';

export interface ProcessStartView {
  rank: number;
  env: Record<string, string>;
  argv: string[];
}

export interface RunProof {
  /** ranks whose process start was read; none: nothing could be checked (the process was gone) */
  ranks: number[];
  /** per name checked, what rank `ranks[0]` saw (null: unset; an option: its value, '' a bare flag) */
  saw: Record<string, string | null>;
  /** names whose value in some rank's process was not the intended one */
  notApplied: Array<{ name: string; expected: string | null; saw: string | null; rank: number }>;
}

/** what the run was meant to have: env values (null: must be unset) and trainer options */
export interface Intended {
  env: Record<string, string | null>;
  /** `--name` → its value ('' a bare flag, null: must be absent) */
  options?: Record<string, string | null>;
}

/** nsa-dbg puts its stack hook first on PYTHONPATH: the lane's value is still there, after it */
const PREPENDED = new Set(['PYTHONPATH']);

function envMatches(name: string, expected: string | null, saw: string | null): boolean {
  if (expected === null || saw === null) return expected === saw;
  if (PREPENDED.has(name)) return saw === expected || saw.endsWith(`:${expected}`);
  return saw === expected;
}

/** an option's value in argv: `--name value`, `--name=value`, '' a bare flag, null absent */
export function optionIn(argv: readonly string[], name: string): string | null {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith(`${name}=`)) return a.slice(name.length + 1);
    if (a !== name) continue;
    const next = argv[i + 1];
    return next === undefined || next.startsWith('-') ? '' : next;
  }
  return null;
}

const shown = (name: string, v: string | null) => (v !== null && isSecretName(name) ? MASK : v);

/** one name to check: its intended value and where a process start has it */
type Check = [name: string, expected: string | null, valueIn: (s: ProcessStartView) => string | null];

export function proofOf(intended: Intended, starts: readonly ProcessStartView[]): RunProof {
  const saw: RunProof['saw'] = {};
  const notApplied: RunProof['notApplied'] = [];
  const checks: Check[] = [
    ...Object.entries(intended.env).map(([name, v]): Check => [name, v, (s) => s.env[name] ?? null]),
    ...Object.entries(intended.options ?? {}).map(
      ([name, v]): Check => [name, v, (s) => optionIn(s.argv, name)],
    ),
  ];
  for (const [name, expected, valueIn] of checks) {
    if (starts[0]) saw[name] = shown(name, valueIn(starts[0]));
    const off = starts.find((s) => !envMatches(name, expected, valueIn(s)));
    if (off)
      notApplied.push({
        name,
        expected: shown(name, expected),
        saw: shown(name, valueIn(off)),
        rank: off.rank,
      });
  }
  return { ranks: starts.map((s) => s.rank), saw, notApplied };
}

/** "NAME (the process saw it unset)", "NAME (rank 1 saw NAME=0)" */
export function notAppliedText(p: RunProof['notApplied'][number], ranks: number): string {
  const who = ranks > 1 ? `rank ${p.rank}` : 'the process';
  const what =
    p.saw === null
      ? 'it unset'
      : p.name.startsWith('-')
        ? `${p.name} ${p.saw || '(flag)'}`
        : `${p.name}=${p.saw}`;
  return `${p.name} (${who} saw ${what})`;
}

/** the proof's one-liner: "env proven applied on 2 ranks", "change not applied: A (…)", "" */
export function proofLine(p: RunProof | undefined): string {
  if (!p) return '';
  if (p.ranks.length === 0) return 'env not checked: the process was gone before it could be read';
  if (p.notApplied.length)
    return `change not applied: ${p.notApplied.map((x) => notAppliedText(x, p.ranks.length)).join(', ')}`;
  return `env proven applied on ${p.ranks.length} rank${p.ranks.length === 1 ? '' : 's'}`;
}
