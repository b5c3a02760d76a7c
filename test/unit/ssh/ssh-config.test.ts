import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseDestination } from '../../../src/targets/ssh/destination.js';
import { SshError } from '../../../src/targets/ssh/errors.js';
import { expandTokens, resolveHost } from '../../../src/targets/ssh/ssh-config.js';

let home: string;
let sshDir: string;

function writeConfig(text: string, name = 'config'): string {
  const path = join(sshDir, name);
  writeFileSync(path, text);
  return path;
}

const resolve = (host: string, configPath?: string) =>
  resolveHost(host, { home, localUser: 'me', ...(configPath ? { configPath } : {}) });

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'nsa-sshcfg-'));
  sshDir = join(home, '.ssh');
  mkdirSync(sshDir);
});

describe('parseDestination', () => {
  it('parses the command-line forms', () => {
    expect(parseDestination('box')).toEqual({ host: 'box' });
    expect(parseDestination('ann@box')).toEqual({ user: 'ann', host: 'box' });
    expect(parseDestination('ann@box:2222')).toEqual({ user: 'ann', host: 'box', port: 2222 });
    expect(parseDestination('box:22')).toEqual({ host: 'box', port: 22 });
    expect(parseDestination('[::1]:2200')).toEqual({ host: '::1', port: 2200 });
    expect(parseDestination('fe80::1')).toEqual({ host: 'fe80::1' });
    expect(parseDestination('ssh://ann@box:2022')).toEqual({ user: 'ann', host: 'box', port: 2022 });
    expect(() => parseDestination('box:99999')).toThrow(/port/);
    expect(() => parseDestination('@box')).toThrow(/user/);
  });
});

describe('resolveHost', () => {
  it('fills OpenSSH defaults for a plain host with no config', () => {
    writeFileSync(join(sshDir, 'id_ed25519'), 'key');
    writeFileSync(join(sshDir, 'id_rsa'), 'key');
    const h = resolve('gpu.example.com');
    expect(h).toMatchObject({
      alias: 'gpu.example.com',
      hostName: 'gpu.example.com',
      port: 22,
      user: 'me',
      identityFiles: [join(sshDir, 'id_ed25519'), join(sshDir, 'id_rsa')],
      knownHostsFiles: [join(sshDir, 'known_hosts')],
      serverAliveCountMax: 3,
      proxyJump: [],
    });
    expect(h.serverAliveIntervalSec).toBeUndefined();
  });

  it('resolves an alias: HostName, Port, User, IdentityFile with ~ and tokens, first value wins', () => {
    writeFileSync(join(sshDir, 'gpu_key'), 'key');
    writeFileSync(join(sshDir, 'key-gpu1.internal-ann'), 'key');
    writeConfig(`
Host gpu
  HostName gpu1.internal
  Port 2222
  User ann
  IdentityFile ~/.ssh/gpu_key
  IdentityFile ~/.ssh/key-%h-%r
  IdentityFile ~/.ssh/missing_key
  UserKnownHostsFile ~/.ssh/kh_%h_%p
  ServerAliveInterval 15
  ServerAliveCountMax 4

Host *
  User fallback
  Port 22
`);
    const h = resolve('gpu');
    expect(h.hostName).toBe('gpu1.internal');
    expect(h.port).toBe(2222);
    expect(h.user).toBe('ann');
    expect(h.identityFiles).toEqual([join(sshDir, 'gpu_key'), join(sshDir, 'key-gpu1.internal-ann')]);
    expect(h.knownHostsFiles).toEqual([join(sshDir, 'kh_gpu1.internal_2222')]);
    expect(h.serverAliveIntervalSec).toBe(15);
    expect(h.serverAliveCountMax).toBe(4);
    expect(resolve('other').user).toBe('fallback');
  });

  it('lets user@ and :port on the command line override the config', () => {
    writeConfig('Host gpu\n  HostName 10.0.0.5\n  User ann\n  Port 2222\n');
    const h = resolve('bob@gpu:2200');
    expect(h).toMatchObject({ hostName: '10.0.0.5', user: 'bob', port: 2200 });
  });

  it('expands %h in HostName and %% literally', () => {
    writeConfig('Host *.gpu\n  HostName %h.example.com\nHost pct\n  HostName a%%b\n');
    expect(resolve('n1.gpu').hostName).toBe('n1.gpu.example.com');
    expect(resolve('pct').hostName).toBe('a%b');
    expect(expandTokens('%u@%h:%p', { u: 'me', h: 'x', p: '22' })).toBe('me@x:22');
    expect(() => expandTokens('%z', {})).toThrow(SshError);
  });

  it('follows Include with globs relative to ~/.ssh, and inside a matching Host block only', () => {
    mkdirSync(join(sshDir, 'config.d'));
    writeFileSync(
      join(sshDir, 'config.d', '10-gpu.conf'),
      'Host gpu\n  HostName from-include\n  Port 2022\n',
    );
    writeFileSync(join(sshDir, 'config.d', '20-other.conf'), 'Host other\n  HostName other-host\n');
    writeFileSync(join(sshDir, 'users.conf'), 'User included-user\n');
    writeConfig(`
Include config.d/*.conf
Host gpu
  Include users.conf
  ServerAliveInterval 7
Host elsewhere
  Include users.conf
`);
    const gpu = resolve('gpu');
    expect(gpu).toMatchObject({
      hostName: 'from-include',
      port: 2022,
      user: 'included-user',
      serverAliveIntervalSec: 7,
    });
    expect(resolve('other')).toMatchObject({ hostName: 'other-host', user: 'me' });
    expect(resolve('elsewhere').user).toBe('included-user');
    expect(resolve('nowhere').user).toBe('me');
  });

  it('never runs Match exec', () => {
    const marker = join(home, 'match-exec-ran');
    writeConfig(`Match exec "touch ${marker}"\n  User matched\n`);
    expect(resolve('box').user).toBe('me');
    expect(existsSync(marker)).toBe(false);
  });

  it('resolves ProxyJump hops through the config, in dialling order', () => {
    writeConfig(`
Host bastion
  HostName bastion.example.com
  User jumper
  Port 2201
Host inner-jump
  HostName 10.1.0.1
  ProxyJump bastion
Host gpu
  HostName 10.1.0.9
  ProxyJump inner-jump
Host direct-form
  HostName 10.2.0.9
  ProxyJump ops@jump.example.com:2222,bastion
Host nojump
  ProxyJump none
`);
    const gpu = resolve('gpu');
    expect(gpu.proxyJump.map((h) => [h.alias, h.hostName, h.port, h.user])).toEqual([
      ['bastion', 'bastion.example.com', 2201, 'jumper'],
      ['inner-jump', '10.1.0.1', 22, 'me'],
    ]);
    expect(gpu.proxyJump.every((h) => h.proxyJump.length === 0)).toBe(true);
    const direct = resolve('direct-form');
    expect(direct.proxyJump.map((h) => `${h.user}@${h.hostName}:${h.port}`)).toEqual([
      'ops@jump.example.com:2222',
      'jumper@bastion.example.com:2201',
    ]);
    expect(resolve('nojump').proxyJump).toEqual([]);
  });

  it('reports a ProxyJump loop and an unreadable --ssh-config as config errors', () => {
    writeConfig('Host a\n  ProxyJump b\nHost b\n  ProxyJump a\n');
    expect(() => resolve('a')).toThrow(/too long/);
    try {
      resolve('a', join(home, 'nope'));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(SshError);
      expect((err as SshError).kind).toBe('config');
      expect((err as SshError).exitCode).toBe(2);
    }
  });

  it('agrees with ssh -G on the basics', () => {
    let hasSsh = true;
    try {
      execFileSync('ssh', ['-V'], { stdio: 'ignore' });
    } catch {
      hasSsh = false;
    }
    if (!hasSsh) return;
    mkdirSync(join(sshDir, 'config.d'));
    writeFileSync(join(sshDir, 'config.d', 'x.conf'), 'Host gpu\n  HostName 10.9.9.9\n  Port 2345\n');
    const cfg = writeConfig('Include config.d/*\nHost gpu\n  User ann\n  ProxyJump ops@jump:2222\n');
    // ssh -G resolves Include relative to the real ~/.ssh, so point it at an absolute copy
    const absCfg = writeConfig(
      `Include ${join(sshDir, 'config.d')}/*\nHost gpu\n  User ann\n  ProxyJump ops@jump:2222\n`,
      'abs',
    );
    const g = Object.fromEntries(
      execFileSync('ssh', ['-G', '-F', absCfg, 'gpu'], { stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf(' ')), l.slice(l.indexOf(' ') + 1)]),
    );
    const h = resolveHost('gpu', { home, configPath: cfg });
    expect(h.hostName).toBe(g.hostname);
    expect(String(h.port)).toBe(g.port);
    expect(h.user).toBe(g.user);
    expect(g.proxyjump).toBe('ops@jump:2222');
    expect(h.proxyJump.map((p) => `${p.user}@${p.hostName}:${p.port}`)).toEqual(['ops@jump:2222']);
  });
});
