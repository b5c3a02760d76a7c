/**
 * Resolves `--host ALIAS` (or `user@host:port`) into everything needed to connect, the way OpenSSH
 * would: ~/.ssh/config (or --ssh-config FILE) parsed by the `ssh-config` package with Match exec
 * disabled (it would run shell commands), Include followed, `~` and `%` tokens expanded, OpenSSH's
 * defaults filled in, and ProxyJump hops resolved through the same config.
 */

import { existsSync, readFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import type SSHConfig from 'ssh-config';
import { expandTilde, loadConfigText } from './config-include.js';
import { parseDestination } from './destination.js';
import { SshError } from './errors.js';

export interface HostSpec {
  /** what the user typed (alias or host name); shown in messages */
  alias: string;
  /** address to connect to (HostName, else the alias) */
  hostName: string;
  port: number;
  user: string;
  /** private key files that exist, in the order to try */
  identityFiles: string[];
  /** IdentitiesOnly yes: do not offer agent keys */
  identitiesOnly: boolean;
  /** agent socket from IdentityAgent (undefined: $SSH_AUTH_SOCK; null: IdentityAgent none) */
  identityAgent?: string | null;
  /** known_hosts files; the first is where --accept-new appends */
  knownHostsFiles: string[];
  /** StrictHostKeyChecking from the config, lowercased, if set */
  strictHostKeyChecking?: string;
  /** ServerAliveInterval in seconds, if set (0: off) */
  serverAliveIntervalSec?: number;
  serverAliveCountMax: number;
  connectTimeoutSec?: number;
  /** jump hosts in connection order (first is dialled directly) */
  proxyJump: HostSpec[];
}

export interface ResolveOptions {
  /** --ssh-config FILE; default ~/.ssh/config (missing is fine, an explicit missing file is an error) */
  configPath?: string;
  home?: string;
  localUser?: string;
}

const DEFAULT_IDENTITIES = ['id_ed25519', 'id_ecdsa', 'id_rsa'];
const MAX_JUMP_DEPTH = 8;

function localUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? 'root';
  }
}

/** Expand OpenSSH `%` tokens; an unknown token is a config error, as in ssh. */
export function expandTokens(text: string, tokens: Record<string, string>): string {
  return text.replace(/%(.)/g, (_m, ch: string) => {
    if (ch === '%') return '%';
    const value = tokens[ch];
    if (value === undefined)
      throw new SshError('config', `ssh config: unsupported token %${ch} in ${JSON.stringify(text)}`);
    return value;
  });
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function list(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : v.split(/\s+/).filter(Boolean);
}

function intOption(v: string | string[] | undefined, name: string, alias: string): number | undefined {
  const s = first(v);
  if (s === undefined) return undefined;
  if (!/^\d+$/.test(s))
    throw new SshError('config', `ssh config: ${name} ${JSON.stringify(s)} for ${alias} is not a number`);
  return Number(s);
}

interface ConfigSource {
  text: string;
  includeDir: string;
}

function readConfigSource(opts: ResolveOptions, home: string): ConfigSource {
  if (opts.configPath !== undefined) {
    const path = expandTilde(opts.configPath, home);
    try {
      // Include paths in a file given with -F are still relative to ~/.ssh, as in OpenSSH
      return { text: readFileSync(path, 'utf8'), includeDir: join(home, '.ssh') };
    } catch (err) {
      throw new SshError('config', `cannot read ssh config ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  const path = join(home, '.ssh', 'config');
  return { text: existsSync(path) ? readFileSync(path, 'utf8') : '', includeDir: dirname(path) };
}

function resolveOne(
  spec: string,
  src: ConfigSource,
  home: string,
  localUser: string,
  depth: number,
): HostSpec {
  if (depth > MAX_JUMP_DEPTH) throw new SshError('config', `ProxyJump chain for ${spec} is too long (loop?)`);
  let dest: ReturnType<typeof parseDestination>;
  try {
    dest = parseDestination(spec);
  } catch (err) {
    throw new SshError('config', `invalid host ${JSON.stringify(spec)}: ${(err as Error).message}`);
  }
  let conf: SSHConfig;
  try {
    conf = loadConfigText(src.text, { alias: dest.host, home, includeDir: src.includeDir });
  } catch (err) {
    throw new SshError('config', `ssh config: ${(err as Error).message}`, { cause: err });
  }
  const query = dest.user !== undefined ? { Host: dest.host, User: dest.user } : { Host: dest.host };
  const c = conf.compute(query, { ignoreCase: true, matchExec: false });

  const alias = dest.host;
  const hostName = expandTokens(first(c.hostname) ?? alias, { h: alias });
  const port = dest.port ?? intOption(c.port, 'Port', alias) ?? 22;
  const user = first(c.user) ?? localUser;
  const tokens = { h: hostName, p: String(port), r: user, u: localUser, n: alias, d: home };
  const path = (p: string) => expandTilde(expandTokens(p, tokens), home);

  const explicitIds = list(c.identityfile).filter((p) => p.toLowerCase() !== 'none');
  const candidates = explicitIds.length
    ? explicitIds.map(path)
    : DEFAULT_IDENTITIES.map((n) => join(home, '.ssh', n));
  const knownHosts = list(c.userknownhostsfile)
    .filter((p) => p.toLowerCase() !== 'none')
    .map(path);
  const agent = first(c.identityagent);

  const hostSpec: HostSpec = {
    alias,
    hostName,
    port,
    user,
    identityFiles: candidates.filter((p) => existsSync(p)),
    identitiesOnly: first(c.identitiesonly)?.toLowerCase() === 'yes',
    knownHostsFiles: knownHosts.length ? knownHosts : [join(home, '.ssh', 'known_hosts')],
    serverAliveCountMax: intOption(c.serveralivecountmax, 'ServerAliveCountMax', alias) ?? 3,
    proxyJump: [],
  };
  if (agent !== undefined) {
    hostSpec.identityAgent =
      agent.toLowerCase() === 'none' ? null : agent === 'SSH_AUTH_SOCK' ? undefined : path(agent);
  }
  const strict = first(c.stricthostkeychecking);
  if (strict !== undefined) hostSpec.strictHostKeyChecking = strict.toLowerCase();
  const alive = intOption(c.serveraliveinterval, 'ServerAliveInterval', alias);
  if (alive !== undefined) hostSpec.serverAliveIntervalSec = alive;
  const connectTimeout = intOption(c.connecttimeout, 'ConnectTimeout', alias);
  if (connectTimeout !== undefined) hostSpec.connectTimeoutSec = connectTimeout;

  const jump = first(c.proxyjump);
  if (jump !== undefined && jump.toLowerCase() !== 'none') {
    for (const hop of jump
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean)) {
      // a hop resolves through the same config, including its own ProxyJump (dialled before it)
      const resolved = resolveOne(hop, src, home, localUser, depth + 1);
      hostSpec.proxyJump.push(...resolved.proxyJump, { ...resolved, proxyJump: [] });
    }
  }
  return hostSpec;
}

/** Resolve a `--host` value through the ssh config. Throws SshError kind 'config'. */
export function resolveHost(target: string, opts: ResolveOptions = {}): HostSpec {
  const home = opts.home ?? homedir();
  const localUser = opts.localUser ?? localUserName();
  return resolveOne(target, readConfigSource(opts, home), home, localUser, 0);
}

/** `user@host` for the header, with the host as the user named it (alias or address). */
export function hostLabel(h: HostSpec): string {
  return `${h.user}@${h.alias}`;
}
