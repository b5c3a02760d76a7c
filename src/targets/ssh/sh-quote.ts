/**
 * Remote command lines. The quoting itself is the project's one POSIX-sh quoting function
 * (src/util/sh-quote.ts, re-exported here): single quotes keep `$(...)`, backticks, `"`, spaces and
 * newlines literal. This file adds what only the SSH side needs: `~/` paths and the `sh -c` wrapper.
 */

import { shExports, shInline, shJoin, shQuote } from '../../util/sh-quote.js';

export { shExports, shJoin, shQuote };

/**
 * Quote a path but keep a leading `~/` outside the quotes, so the remote shell still expands it to
 * the login user's home (run dirs may be given as `~/.nsa-dbg/runs/...`).
 */
export function shQuotePath(path: string): string {
  if (path === '~') return '~';
  if (path.startsWith('~/')) return `~/${shQuote(path.slice(2))}`;
  return shQuote(path);
}

export interface ShScriptOptions {
  cwd?: string;
  /** passed as `export K='v'` in the script: sshd drops `env` channel requests (AcceptEnv) */
  env?: Record<string, string>;
  /**
   * print `NSA_DBG_PID=<pid>` first (on stdout for a PTY, where stderr is merged anyway; on stderr
   * otherwise), so the caller learns the remote pid: `exec` keeps it
   */
  printPid?: 'stdout' | 'stderr';
  /**
   * a `sh -c SCRIPT NAME ARGS…` argv runs as SCRIPT in this script's own shell (shInline): for the
   * command shells, where every command is one; not for a launch, whose `$0` is its own
   */
  inline?: boolean;
}

/** A POSIX-sh script: optional pid line, `cd`, exports, then `exec argv`. */
export function shScript(argv: readonly string[], opts: ShScriptOptions = {}): string {
  if (argv.length === 0) throw new Error('empty argv');
  const parts: string[] = [];
  if (opts.printPid) parts.push(`echo "${PID_MARKER}$$"${opts.printPid === 'stderr' ? ' >&2' : ''}`);
  if (opts.cwd) parts.push(`cd ${shQuotePath(opts.cwd)} || exit 127`);
  if (opts.env && Object.keys(opts.env).length) parts.push(shExports(opts.env));
  parts.push(opts.inline === true ? shInline(argv) : `exec ${shJoin(argv)}`);
  return parts.join('\n');
}

export const PID_MARKER = 'NSA_DBG_PID=';

/**
 * The command line for an exec channel: the script run by `sh -c`, so the login shell's flavour
 * (bash, zsh, ...) does not change how it is read.
 */
export function shCommand(argv: readonly string[], opts: ShScriptOptions = {}): string {
  return shJoin(['sh', '-c', shScript(argv, opts)]);
}
