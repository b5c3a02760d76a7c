/**
 * A trainer command that does not exist would still be started: the shell fails in its first
 * millisecond, and the run is judged a crash at step 0 with the reason only in stdout.log. It is
 * looked up on the target first, the way the launcher will run it (in its working dir, with the
 * lane's PATH if it sets one), and refused in one line.
 */
import type { Target } from './target.js';

export class CommandNotFound extends Error {
  constructor(
    readonly command: string,
    target: string,
  ) {
    super(`command not found: ${command}${target === 'local' ? '' : ` (on ${target})`}`);
    this.name = 'CommandNotFound';
  }
}

export class ScriptNotFound extends Error {
  constructor(
    readonly script: string,
    cwd: string,
    target: string,
    defaultCommand = false,
  ) {
    const where = `in ${cwd}${target === 'local' ? '' : ` on ${target}`}`;
    const why = defaultCommand ? "; it is the lanes' default trainer (nsa-vibe's): give yours after --" : '';
    super(`no such trainer script: ${script} (${where})${why}`);
    this.name = 'ScriptNotFound';
  }
}

// $1 the working dir, $2 the lane's PATH (empty: the login's), $3 the command, $4 its script or ''
const LOOKUP = [
  'cd "$1" 2>/dev/null',
  'if [ -n "$2" ]; then PATH=$2; fi',
  'if ! command -v -- "$3" >/dev/null 2>&1; then echo missing',
  'elif [ -n "$4" ] && [ ! -f "$4" ]; then echo no-script',
  'else echo found; fi',
].join('; ');

/** Python's options that take a value (`-X dev`, `-W error`) */
const PY_OPTION_ARG = new Set(['-X', '-W', '--check-hash-based-pycs']);

/** the script a Python command runs (`python3 -u train.py` → train.py); none for -m, -c or stdin */
export function pythonScript(argv: readonly string[]): string | null {
  const exe = argv[0]?.slice(argv[0].lastIndexOf('/') + 1) ?? '';
  if (!/^python[\d.]*$/.test(exe)) return null;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-m' || a === '-c' || a === '-') return null;
    if (PY_OPTION_ARG.has(a)) i++;
    else if (!a.startsWith('-')) return a;
  }
  return null;
}

/**
 * Throws CommandNotFound when `argv[0]` is not a command on the target, ScriptNotFound when it is
 * Python and the script it is given is not there (the lanes' default trainer,
 * `scripts/train_showcase.py`, run from a folder that is not nsa-vibe's). A lookup that cannot be
 * made (no shell, a dropped link) says nothing: the run then fails or works on its own.
 */
export async function requireCommand(
  target: Target,
  spec: { argv: string[]; cwd: string; env: Record<string, string> },
  o: { defaultCommand?: boolean } = {},
): Promise<void> {
  const command = spec.argv[0];
  if (!command) return;
  const script = pythonScript(spec.argv);
  let out: string;
  try {
    const argv = ['sh', '-c', LOOKUP, 'sh', spec.cwd, spec.env.PATH ?? '', command, script ?? ''];
    out = (await target.exec(argv, { timeoutMs: 15_000 })).stdout.trim();
  } catch {
    return;
  }
  if (out === 'missing') throw new CommandNotFound(command, target.label);
  if (out === 'no-script' && script)
    throw new ScriptNotFound(script, spec.cwd, target.label, o.defaultCommand);
}
