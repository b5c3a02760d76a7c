/**
 * Trainers nsa-dbg knows by their command: how each takes its step count and where it keeps its
 * config (and so its out_dir). Any other trainer is a black box that prints lines: a lane's
 * `stepsFlag`, `stepRegex` and `outDir` say the same things for it (README "Trainers").
 */

export interface TrainerProfile {
  /** recognised by its command (the script and its arguments, after any launcher) */
  matches(argv: string[]): boolean;
  /** how the step count is passed, when the lane does not say (`--flag=` takes one argument) */
  stepsFlag?: string;
  /** the config that holds its out_dir: named by an env var, with the trainer's own default */
  config?: { env: string; default?: string; outDirKey: string };
}

const script = (argv: string[], re: RegExp) => argv.some((a) => re.test(a));

export const TRAINERS: TrainerProfile[] = [
  {
    // nsa-vibe: `python -u scripts/train_showcase.py ...`
    matches: (argv) => script(argv, /(?:^|\/)train_showcase\.py$/),
    stepsFlag: '--steps',
    config: { env: 'CONFIG', default: 'configs/train_showcase.yaml', outDirKey: 'train.out_dir' },
  },
  {
    // karpathy/nanoGPT: `python train.py [config/x.py] [--key=value ...]`; its configurator takes
    // only --key=value, and --max_iters is its step count
    matches: (argv) =>
      script(argv, /(?:^|\/)train\.py$/) &&
      argv.some((a) => /^--\w+=/.test(a) || /(?:^|\/)config\/\w+\.py$/.test(a)),
    stepsFlag: '--max_iters=',
  },
];

/** the known trainer a command runs, if any */
export function trainerOf(argv: string[]): TrainerProfile | undefined {
  return TRAINERS.find((t) => t.matches(argv));
}

/**
 * The arguments that pass a step count: `--steps 5`, or with a flag ending in `=`, `--max_iters=5`.
 * An empty flag passes nothing (the trainer's own count stands).
 */
export function stepsArgs(flag: string, steps: number): string[] {
  if (flag === '') return [];
  return flag.endsWith('=') ? [`${flag}${steps}`] : [flag, String(steps)];
}

/** the step count a command already passes with `flag` (its last occurrence), if any */
export function stepsInCommand(flag: string, argv: string[]): number | undefined {
  if (flag === '') return undefined;
  let found: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    // `--max_iters=5` for a flag ending in `=`; `--steps 5` or `--steps=5` for one that does not
    const joined = flag.endsWith('=') ? flag : `${flag}=`;
    const v = a.startsWith(joined) ? a.slice(joined.length) : a === flag ? argv[i + 1] : undefined;
    if (v !== undefined && /^\d+$/.test(v)) found = Number(v);
  }
  return found;
}
