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
