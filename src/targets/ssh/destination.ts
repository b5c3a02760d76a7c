/**
 * Plain destinations as OpenSSH accepts them on the command line: `host`, `user@host`,
 * `user@host:port`, `[v6addr]:port`, `ssh://user@host:port`. A bare IPv6 address (several colons)
 * has no port part.
 */

export interface Destination {
  user?: string;
  host: string;
  port?: number;
}

function parsePort(text: string, whole: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65535)
    throw new Error(`invalid port in ${JSON.stringify(whole)}`);
  return port;
}

export function parseDestination(spec: string): Destination {
  let rest = spec.trim();
  if (rest === '') throw new Error('empty host');
  if (rest.startsWith('ssh://')) rest = rest.slice('ssh://'.length).replace(/\/$/, '');
  let user: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    user = rest.slice(0, at);
    rest = rest.slice(at + 1);
    if (user === '') throw new Error(`empty user in ${JSON.stringify(spec)}`);
  }
  let host = rest;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(rest);
  if (bracketed) {
    host = bracketed[1]!;
    if (bracketed[2] !== undefined) port = parsePort(bracketed[2], spec);
  } else {
    const colons = rest.split(':').length - 1;
    if (colons === 1) {
      const i = rest.indexOf(':');
      host = rest.slice(0, i);
      port = parsePort(rest.slice(i + 1), spec);
    }
  }
  if (host === '') throw new Error(`empty host in ${JSON.stringify(spec)}`);
  return { ...(user !== undefined ? { user } : {}), host, ...(port !== undefined ? { port } : {}) };
}
