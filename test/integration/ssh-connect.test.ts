/**
 * Connecting to a real OpenSSH sshd: config aliases, ProxyJump, agent and encrypted-key auth, and
 * host-key policy (unknown → refused with the fingerprint, accept-new, changed, hashed entries).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  connectSshTarget,
  HostKeyError,
  isConnectionFailure,
  SshError,
  type SshTarget,
} from '../../src/targets/ssh/index.js';
import { makeUserKey, startSshd, type TestSshd } from '../helpers/sshd.js';

let sshd: TestSshd;
const opened: SshTarget[] = [];

beforeAll(async () => {
  sshd = await startSshd();
});
afterAll(async () => {
  await sshd?.stop();
});
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
  writeFileSync(sshd.knownHostsPath, '');
});

async function connect(
  host: string,
  extra: Partial<Parameters<typeof connectSshTarget>[0]> = {},
): Promise<SshTarget> {
  const t = await connectSshTarget({
    host,
    sshConfig: sshd.configPath,
    home: sshd.dir, // keep the tester's own ~/.ssh out of it
    connection: { agentSocket: null },
    ...extra,
  });
  opened.push(t);
  return t;
}

async function whoami(t: SshTarget): Promise<string> {
  const r = await t.exec(['id', '-un']);
  expect(r.code).toBe(0);
  return r.stdout.trim();
}

describe('ssh connect', () => {
  it('connects through an alias with an identity file', async () => {
    sshd.trustHostKey();
    const t = await connect('target');
    expect(t.kind).toBe('ssh');
    expect(t.label).toBe(`${sshd.user}@target`);
    expect(await whoami(t)).toBe(sshd.user);
  });

  it('refuses an unknown host with the SHA256 fingerprint, then accept-new adds and matches it', async () => {
    const err = await connect('target').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    const hk = err as HostKeyError;
    expect(hk.kind).toBe('unknown');
    expect(hk.fingerprint).toBe(sshd.hostFingerprint());
    expect(hk.message).toContain(sshd.hostFingerprint());
    expect(hk.message).toContain('--accept-new');
    expect(hk.message).toContain('ssh-keyscan');
    expect(isConnectionFailure(hk)).toBe(true);
    expect(readFileSync(sshd.knownHostsPath, 'utf8')).toBe('');

    const added: string[] = [];
    const t = await connect('target', { acceptNew: true, onHostKeyAdded: (i) => added.push(i.fingerprint) });
    expect(await whoami(t)).toBe(sshd.user);
    expect(added).toEqual([sshd.hostFingerprint()]);
    const lines = readFileSync(sshd.knownHostsPath, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^\\[127\\.0\\.0\\.1\\]:${sshd.port} ssh-ed25519 AAAA`));

    const again = await connect('target'); // no accept-new: the added line matches
    expect(await whoami(again)).toBe(sshd.user);
    expect(readFileSync(sshd.knownHostsPath, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('matches hashed known_hosts entries', async () => {
    sshd.trustHostKey({ hashed: true });
    expect(readFileSync(sshd.knownHostsPath, 'utf8')).toMatch(/^\|1\|/);
    const t = await connect('target');
    expect(await whoami(t)).toBe(sshd.user);
  });

  it('jumps through a ProxyJump alias and verifies each hop under its own name', async () => {
    sshd.addConfig(
      [
        'Host jump-a',
        '  HostName 127.0.0.1',
        `  Port ${sshd.port}`,
        `  IdentityFile ${sshd.userKey}`,
        `  UserKnownHostsFile ${sshd.knownHostsPath}`,
        'Host behind-b',
        '  HostName localhost',
        `  Port ${sshd.port}`,
        `  IdentityFile ${sshd.userKey}`,
        `  UserKnownHostsFile ${sshd.knownHostsPath}`,
        '  ProxyJump jump-a',
      ].join('\n'),
    );
    sshd.trustHostKey(); // only the jump host's name is known
    const err = await connect('behind-b').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect((err as HostKeyError).host).toBe('localhost');

    sshd.trustHostKey({ name: `[localhost]:${sshd.port}` });
    const t = await connect('behind-b');
    expect(t.connection.host.proxyJump.map((h) => h.alias)).toEqual(['jump-a']);
    expect(await whoami(t)).toBe(sshd.user);
  });

  it('authenticates with the key held only by ssh-agent', async () => {
    sshd.trustHostKey();
    const noAgent = await connect('agent-only').catch((e: unknown) => e);
    expect(noAgent).toBeInstanceOf(SshError);
    expect((noAgent as SshError).kind).toBe('auth');

    const socket = await sshd.startAgent();
    const t = await connect('agent-only', { connection: { agentSocket: socket } });
    expect(await whoami(t)).toBe(sshd.user);
  });

  it('asks for the passphrase of an encrypted key and never needs it written down', async () => {
    sshd.trustHostKey();
    const key = makeUserKey(sshd.dir, 'enc_key', 'correct horse');
    sshd.authorize(`${key}.pub`);
    sshd.addConfig(
      [
        'Host enc',
        '  HostName 127.0.0.1',
        `  Port ${sshd.port}`,
        `  IdentityFile ${key}`,
        `  UserKnownHostsFile ${sshd.knownHostsPath}`,
      ].join('\n'),
    );
    const asked: string[] = [];
    const answers = ['wrong', 'correct horse'];
    const t = await connect('enc', {
      askPassphrase: async (path) => {
        asked.push(path);
        return answers.shift() ?? '';
      },
    });
    expect(await whoami(t)).toBe(sshd.user);
    expect(asked).toEqual([key, key]);
    // a cut link reconnects with the passphrase kept in memory: no new prompt
    sshd.killSessions();
    expect(await whoami(t)).toBe(sshd.user);
    expect(asked).toHaveLength(2);
  });

  it('refuses a changed host key, also when it changes during a reconnect', async () => {
    sshd.trustHostKey();
    const states: string[] = [];
    const t = await connect('target', { onState: (s) => states.push(s.state), downTimeoutMs: 5000 });
    expect(await whoami(t)).toBe(sshd.user);
    const oldFingerprint = sshd.hostFingerprint();
    await sshd.restartWithNewHostKey();
    expect(sshd.hostFingerprint()).not.toBe(oldFingerprint);

    const err = await t.exec(['true']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect((err as HostKeyError).kind).toBe('changed');
    expect(states).toContain('down');
    expect(states[states.length - 1]).toBe('closed');

    const fresh = await connect('target', { acceptNew: true }).catch((e: unknown) => e);
    expect(fresh).toBeInstanceOf(HostKeyError);
    expect((fresh as HostKeyError).kind).toBe('changed');
    expect((fresh as HostKeyError).fingerprint).toBe(sshd.hostFingerprint());
    expect((fresh as HostKeyError).message).toMatch(/CHANGED/);
    expect((fresh as HostKeyError).exitCode).toBe(3);
  });

  it('fails with kind connect when nothing listens', async () => {
    const err = await connectSshTarget({
      host: `${sshd.user}@127.0.0.1:1`,
      home: join(sshd.dir, 'nohome'),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshError);
    expect((err as SshError).kind).toBe('connect');
    expect((err as SshError).exitCode).toBe(3);
  });
});
