/**
 * POSIX-sh quoting. Every argument and env value that reaches a shell (local launcher or remote
 * command line) goes through here: single quotes make `$(...)`, backticks, `$VAR`, globs, spaces and
 * newlines literal; an embedded single quote is closed, escaped and reopened.
 */
export function shQuote(s: string): string {
  if (s !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function shJoin(argv: readonly string[]): string {
  return argv.map(shQuote).join(' ');
}

/**
 * argv as the body of a script that a shell runs, for a shell that runs one command each: `sh -c
 * SCRIPT NAME ARGS…` (how nsa-dbg asks a box or a node anything) is SCRIPT itself with ARGS as its
 * positional parameters, so the shell running it starts no second one; anything else is `exec`ed.
 * The same process either way (a `kill $$` in SCRIPT, its exit status); only `$0` differs. A
 * command shell's command is a fork and an exec fewer: a round of one command on each of 64
 * simulated nodes sharing 2 cores spent most of its seconds starting processes.
 */
export function shInline(argv: readonly string[]): string {
  const [sh, c, script, , ...args] = argv;
  if (sh !== 'sh' || c !== '-c' || script === undefined) return `exec ${shJoin(argv)}`;
  return `set -- ${args.map(shQuote).join(' ')}\n${script}`;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `export K='v'` lines; a bad name is an error rather than something the shell would interpret. */
export function shExports(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => {
      if (!ENV_NAME.test(k)) throw new Error(`invalid environment variable name: ${JSON.stringify(k)}`);
      return `export ${k}=${shQuote(v)}`;
    })
    .join('\n');
}
