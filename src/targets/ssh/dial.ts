/**
 * Opens one authenticated ssh2 Client to a host, through the jump hosts before it. Every hop's host
 * key is checked against known_hosts under that hop's own name and port.
 */

import type { Duplex } from 'node:stream';
import { Client, type ConnectConfig } from 'ssh2';
import { type AskPassphrase, makeAuthPlan, type PassphraseCache } from './auth.js';
import { type HostKeyError, SshError, type SshErrorKind } from './errors.js';
import { hostKeyAlgorithmsFor, knownKeyTypes, loadKnownHosts, verifyHostKey } from './known-hosts.js';
import type { HostSpec } from './ssh-config.js';

export interface DialOptions {
  acceptNew: boolean;
  askPassphrase?: AskPassphrase;
  passphrases: PassphraseCache;
  /** agent socket override; undefined: the host's IdentityAgent, else $SSH_AUTH_SOCK */
  agentSocket?: string | null;
  keepaliveIntervalMs: number;
  keepaliveCountMax: number;
  readyTimeoutMs: number;
  /** told when accept-new added a key, so the UI can say so */
  onHostKeyAdded?: (info: { host: string; port: number; fingerprint: string; file: string }) => void;
}

function preferredHostKeyAlgos(spec: HostSpec): string[] {
  let types: string[] = [];
  try {
    types = knownKeyTypes(loadKnownHosts(spec.knownHostsFiles), spec.hostName, spec.port);
  } catch {
    // unreadable: the verifier reports it
  }
  return hostKeyAlgorithmsFor(types);
}

function agentFor(spec: HostSpec, o: DialOptions): string | null {
  if (o.agentSocket !== undefined) return o.agentSocket;
  if (spec.identityAgent !== undefined) return spec.identityAgent;
  return process.env.SSH_AUTH_SOCK || null;
}

function where(spec: HostSpec): string {
  return `${spec.user}@${spec.hostName}:${spec.port}${spec.alias !== spec.hostName ? ` (${spec.alias})` : ''}`;
}

/** Connect and authenticate to one host, over sock when it is reached through a jump host. */
export function dialOne(spec: HostSpec, o: DialOptions, sock?: Duplex): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    const auth = makeAuthPlan(spec, agentFor(spec, o), o.passphrases, o.askPassphrase);
    let hostKeyError: HostKeyError | null = null;
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      client.removeAllListeners('ready');
      client.on('error', () => {}); // late errors after giving up must not crash the process
      client.end();
      reject(err);
    };
    const failWith = (kind: SshErrorKind, message: string, cause: unknown) =>
      fail(new SshError(kind, message, { cause }));
    client.once('ready', () => {
      if (settled) return;
      settled = true;
      resolve(client);
    });
    client.on('error', (err: Error & { level?: string }) => {
      if (hostKeyError) return fail(hostKeyError);
      if (err.level === 'client-authentication')
        return failWith('auth', `authentication failed for ${where(spec)}: ${auth.describe()}`, err);
      if (err.level === 'client-timeout')
        return failWith('timeout', `timed out connecting to ${where(spec)}`, err);
      failWith('connect', `cannot connect to ${where(spec)}: ${err.message}`, err);
    });
    client.on('close', () => {
      fail(hostKeyError ?? new SshError('connect', `connection to ${where(spec)} closed during setup`));
    });
    const preferred = preferredHostKeyAlgos(spec);
    const config: ConnectConfig = {
      host: spec.hostName,
      port: spec.port,
      username: spec.user,
      keepaliveInterval: o.keepaliveIntervalMs,
      keepaliveCountMax: o.keepaliveCountMax,
      readyTimeout: o.readyTimeoutMs,
      authHandler: auth.handler,
      hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => {
        try {
          const check = verifyHostKey({
            host: spec.hostName,
            port: spec.port,
            key,
            files: spec.knownHostsFiles,
            acceptNew: o.acceptNew,
          });
          if (check.added) {
            o.onHostKeyAdded?.({
              host: spec.hostName,
              port: spec.port,
              fingerprint: check.fingerprint,
              file: spec.knownHostsFiles[0] ?? '',
            });
          }
          verify(true);
        } catch (err) {
          hostKeyError = err as HostKeyError;
          verify(false);
        }
      },
      ...(preferred.length
        ? { algorithms: { serverHostKey: { remove: preferred, prepend: preferred } } }
        : {}),
      ...(sock ? { sock } : {}),
    } as ConnectConfig;
    try {
      client.connect(config);
    } catch (err) {
      failWith('connect', `cannot connect to ${where(spec)}: ${(err as Error).message}`, err);
    }
  });
}

function forwardOut(via: Client, spec: HostSpec): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    via.forwardOut('127.0.0.1', 0, spec.hostName, spec.port, (err, stream) => {
      if (err)
        reject(
          new SshError('connect', `jump host cannot reach ${where(spec)}: ${err.message}`, { cause: err }),
        );
      else resolve(stream);
    });
  });
}

/** Dial spec through its ProxyJump hops; returns the clients in order, the target's last. */
export async function dialChain(spec: HostSpec, o: DialOptions): Promise<Client[]> {
  const chain = [...spec.proxyJump, spec];
  const clients: Client[] = [];
  try {
    for (const hop of chain) {
      const prev = clients[clients.length - 1];
      const sock = prev ? await forwardOut(prev, hop) : undefined;
      clients.push(await dialOne(hop, o, sock));
    }
  } catch (err) {
    for (const c of clients.reverse()) c.end();
    throw err;
  }
  return clients;
}
