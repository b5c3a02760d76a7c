/**
 * known_hosts verification, as OpenSSH does it: plain names, comma lists with `*`/`?`/`!`,
 * `[host]:port` for ports other than 22, hashed `|1|salt|hmac` names, `@revoked` keys;
 * `@cert-authority` lines are ignored (no certificate support). Policy: unknown → refuse unless
 * accept-new (then append and go on), changed or revoked → always refuse, unreadable → refuse.
 */

import { createHash, createHmac } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { HostKeyError } from './errors.js';
import { shQuote } from './sh-quote.js';

export interface KnownHostEntry {
  marker: '' | '@revoked' | '@cert-authority';
  /** the host patterns field as written (comma list or one hashed name) */
  hosts: string;
  keyType: string;
  key: Buffer;
  file: string;
  line: number;
}

export type HostKeyStatus = 'match' | 'unknown' | 'changed' | 'revoked';

export interface HostKeyCheck {
  status: HostKeyStatus;
  /** `SHA256:` + unpadded base64, as `ssh-keygen -lf` prints */
  fingerprint: string;
  keyType: string;
  /** for 'changed' / 'revoked': the entry that decided it */
  entry?: KnownHostEntry;
}

/** The name known_hosts stores for a host: `host`, or `[host]:port` when the port is not 22. */
export function hostToken(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

export function fingerprintSha256(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The key type stored at the start of an SSH wire-format public key blob. */
export function keyTypeOf(key: Buffer): string {
  if (key.length < 4) return 'unknown';
  const len = key.readUInt32BE(0);
  if (len > 64 || 4 + len > key.length) return 'unknown';
  return key.subarray(4, 4 + len).toString('latin1');
}

export function parseKnownHosts(text: string, file = ''): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const fields = line.split(/\s+/);
    let marker: KnownHostEntry['marker'] = '';
    if (fields[0]?.startsWith('@')) {
      const m = fields.shift();
      if (m !== '@revoked' && m !== '@cert-authority') return;
      marker = m;
    }
    const [hosts, keyType, b64] = fields;
    if (!hosts || !keyType || !b64 || !/^[A-Za-z0-9+/]+=*$/.test(b64)) return;
    entries.push({ marker, hosts, keyType, key: Buffer.from(b64, 'base64'), file, line: i + 1 });
  });
  return entries;
}

function wildcardMatch(pattern: string, text: string): boolean {
  const re = pattern
    .replace(/[\\^$.|+()[\]{}]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 'i').test(text);
}

function hashedMatch(field: string, token: string): boolean {
  const parts = field.split('|'); // ['', '1', salt, hash]
  if (parts.length !== 4 || parts[1] !== '1') return false;
  const mac = createHmac('sha1', Buffer.from(parts[2]!, 'base64')).update(token).digest('base64');
  return mac === parts[3];
}

/** Whether an entry's host field names token (a negated pattern vetoes the whole line). */
export function hostsFieldMatches(field: string, token: string): boolean {
  if (field.startsWith('|')) return hashedMatch(field, token);
  const patterns = field.split(',');
  if (patterns.some((p) => p.startsWith('!') && wildcardMatch(p.slice(1), token))) return false;
  return patterns.some((p) => !p.startsWith('!') && wildcardMatch(p, token));
}

export function checkHostKey(
  entries: readonly KnownHostEntry[],
  host: string,
  port: number,
  key: Buffer,
): HostKeyCheck {
  const token = hostToken(host, port);
  const keyType = keyTypeOf(key);
  const fingerprint = fingerprintSha256(key);
  const relevant = entries.filter((e) => e.marker !== '@cert-authority' && hostsFieldMatches(e.hosts, token));
  const revoked = relevant.find((e) => e.marker === '@revoked' && e.key.equals(key));
  if (revoked) return { status: 'revoked', fingerprint, keyType, entry: revoked };
  const plain = relevant.filter((e) => e.marker === '');
  if (plain.some((e) => e.key.equals(key))) return { status: 'match', fingerprint, keyType };
  const sameType = plain.find((e) => keyTypeOf(e.key) === keyType);
  if (sameType) return { status: 'changed', fingerprint, keyType, entry: sameType };
  return { status: 'unknown', fingerprint, keyType };
}

/** Key types already known for the host, so the client can prefer them in negotiation like ssh does. */
export function knownKeyTypes(entries: readonly KnownHostEntry[], host: string, port: number): string[] {
  const token = hostToken(host, port);
  const types = entries
    .filter((e) => e.marker === '' && hostsFieldMatches(e.hosts, token))
    .map((e) => keyTypeOf(e.key));
  return [...new Set(types)];
}

/**
 * Host key algorithms per known_hosts key type, so a known type is negotiated first (as ssh does).
 * A Map: the type is a word of a file, and a plain object would answer `constructor` with a function.
 */
const ALGOS_FOR_TYPE = new Map<string, string[]>([
  ['ssh-ed25519', ['ssh-ed25519']],
  ['ecdsa-sha2-nistp256', ['ecdsa-sha2-nistp256']],
  ['ecdsa-sha2-nistp384', ['ecdsa-sha2-nistp384']],
  ['ecdsa-sha2-nistp521', ['ecdsa-sha2-nistp521']],
  ['ssh-rsa', ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa']],
]);

/** the host key algorithms to offer first for the key types known_hosts has for a host */
export function hostKeyAlgorithmsFor(types: readonly string[]): string[] {
  return types.flatMap((t) => ALGOS_FOR_TYPE.get(t) ?? []);
}

/** Read every known_hosts file. Missing files are empty; any other read failure throws. */
export function loadKnownHosts(files: readonly string[]): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    entries.push(...parseKnownHosts(text, file));
  }
  return entries;
}

/** Append host's key to file in OpenSSH's format, creating ~/.ssh if needed. */
export function appendKnownHost(file: string, host: string, port: number, key: Buffer): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  let prefix = '';
  try {
    const existing = readFileSync(file);
    if (existing.length > 0 && existing[existing.length - 1] !== 0x0a) prefix = '\n';
  } catch {
    // new file
  }
  appendFileSync(file, `${prefix}${hostToken(host, port)} ${keyTypeOf(key)} ${key.toString('base64')}\n`, {
    mode: 0o600,
  });
}

export interface VerifyOptions {
  host: string;
  port: number;
  key: Buffer;
  /** known_hosts files; the first receives accepted keys */
  files: readonly string[];
  acceptNew: boolean;
}

/**
 * Decide whether to trust a host key; throws HostKeyError when not. Returns the check, with
 * `added: true` when accept-new appended an unknown key.
 */
export function verifyHostKey(o: VerifyOptions): HostKeyCheck & { added: boolean } {
  const fingerprint = fingerprintSha256(o.key);
  const keyType = keyTypeOf(o.key);
  const file = o.files[0] ?? '';
  const token = hostToken(o.host, o.port);
  const base = { host: o.host, port: o.port, fingerprint, keyType };
  const unreadable = (err: unknown) =>
    new HostKeyError({
      ...base,
      kind: 'unreadable',
      file,
      cause: err,
      message: `cannot verify the host key of ${token}: known_hosts unreadable (${(err as Error).message}); refusing to connect`,
    });
  let entries: KnownHostEntry[];
  try {
    entries = loadKnownHosts(o.files);
  } catch (err) {
    throw unreadable(err);
  }
  const check = checkHostKey(entries, o.host, o.port, o.key);
  switch (check.status) {
    case 'match':
      return { ...check, added: false };
    case 'revoked':
      throw new HostKeyError({
        ...base,
        kind: 'revoked',
        file: check.entry?.file ?? file,
        message: `host key for ${token} (${keyType} ${fingerprint}) is marked @revoked in ${check.entry?.file}:${check.entry?.line}; refusing to connect`,
      });
    case 'changed':
      throw new HostKeyError({
        ...base,
        kind: 'changed',
        file: check.entry?.file ?? file,
        message:
          `REMOTE HOST IDENTIFICATION HAS CHANGED for ${token}: the server sent ${keyType} key ${fingerprint}, ` +
          `which differs from the key in ${check.entry?.file}:${check.entry?.line}. Someone could be intercepting ` +
          `the connection, or the host was reinstalled. Refusing to connect (--accept-new does not override this). ` +
          `If the change is expected: ssh-keygen -R ${shQuote(token)} -f ${shQuote(check.entry?.file ?? file)}`,
      });
    case 'unknown':
      if (!o.acceptNew) {
        throw new HostKeyError({
          ...base,
          kind: 'unknown',
          file,
          message:
            `host key for ${token} is not known (${keyType} key ${fingerprint}, not in ${o.files.join(', ')}). ` +
            `Check the fingerprint, then run again with --accept-new, or: ` +
            `ssh-keyscan -p ${o.port} -t ${keyType} ${shQuote(o.host)} >> ${shQuote(file)}`,
        });
      }
      try {
        appendKnownHost(file, o.host, o.port, o.key);
      } catch (err) {
        throw unreadable(err);
      }
      return { ...check, added: true };
  }
}
