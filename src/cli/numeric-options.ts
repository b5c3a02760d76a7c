/**
 * Every numeric option of every command, checked once before any command runs: yargs reads
 * `--steps abc` as NaN and `--steps -3` as -3, and either taken at face value wrote `--steps NaN`
 * into run.sh or judged a 0-step run GO. Option names mean the same in every command, so one table
 * covers them all.
 */

interface NumberRule {
  min: number;
  max?: number;
  /** a whole number (steps, ranks, ports) */
  whole: boolean;
}

const NUMERIC_OPTIONS: Record<string, NumberRule> = {
  steps: { min: 1, whole: true },
  'step-ms': { min: 1, whole: true },
  ranks: { min: 1, whole: true },
  nodes: { min: 1, whole: true },
  'rdzv-port': { min: 1, max: 65535, whole: true },
  budget: { min: 1, whole: true },
  repeat: { min: 1, whole: true },
  rev: { min: 1, whole: true },
};

function describe(rule: NumberRule): string {
  const kind = rule.whole ? 'a whole number' : 'a number';
  return rule.max === undefined ? `${kind} ≥ ${rule.min}` : `${kind} from ${rule.min} to ${rule.max}`;
}

/** what was typed after `--name` (or `--name=`) on the command line: yargs keeps only NaN of `abc` */
function typed(raw: readonly string[], name: string): string | undefined {
  let out: string | undefined;
  // the trainer's own words after `--` are not ours
  const end = raw.indexOf('--');
  const ours = end < 0 ? raw : raw.slice(0, end);
  ours.forEach((a, i) => {
    if (a === `--${name}`) out = ours[i + 1];
    else if (a.startsWith(`--${name}=`)) out = a.slice(name.length + 3);
  });
  return out;
}

/**
 * The first numeric option that is not what it must be, as one line; null when all are fine.
 * `raw`: the command line's words, to quote what was typed.
 */
export function numericOptionError(
  argv: Record<string, unknown>,
  raw: readonly string[] = [],
): string | null {
  for (const [name, rule] of Object.entries(NUMERIC_OPTIONS)) {
    const v = argv[name];
    if (v === undefined) continue;
    if (Array.isArray(v)) return `give --${name} once`;
    const ok =
      typeof v === 'number' &&
      Number.isFinite(v) &&
      (!rule.whole || Number.isInteger(v)) &&
      v >= rule.min &&
      (rule.max === undefined || v <= rule.max);
    if (!ok) {
      const given = typed(raw, name) ?? String(v);
      return `--${name} must be ${describe(rule)}, not "${given}"`;
    }
  }
  return null;
}
