import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HostKeyError } from '../../../src/targets/ssh/errors.js';
import {
  checkHostKey,
  fingerprintSha256,
  hostKeyAlgorithmsFor,
  hostsFieldMatches,
  hostToken,
  keyTypeOf,
  knownKeyTypes,
  parseKnownHosts,
  verifyHostKey,
} from '../../../src/targets/ssh/known-hosts.js';

let dir: string;
let keyA: { type: string; b64: string; blob: Buffer; pub: string };
let keyB: { type: string; b64: string; blob: Buffer };
let rsa: { type: string; b64: string; blob: Buffer };

function makeKey(type: string) {
  const path = join(dir, `k-${randomBytes(3).toString('hex')}`);
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', path]);
  const [t, b64] = readFileSync(`${path}.pub`, 'utf8').trim().split(/\s+/) as [string, string];
  return { type: t, b64, blob: Buffer.from(b64, 'base64'), pub: `${path}.pub` };
}

function hashed(name: string): string {
  const salt = randomBytes(20);
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'nsa-kh-'));
  keyA = makeKey('ed25519');
  keyB = makeKey('ed25519');
  rsa = makeKey('rsa');
});

describe('known_hosts', () => {
  it('computes OpenSSH fingerprints and key types', () => {
    const expected = execFileSync('ssh-keygen', ['-lf', keyA.pub]).toString().split(/\s+/)[1];
    expect(fingerprintSha256(keyA.blob)).toBe(expected);
    expect(fingerprintSha256(keyA.blob)).not.toContain('=');
    expect(keyTypeOf(keyA.blob)).toBe('ssh-ed25519');
    expect(keyTypeOf(rsa.blob)).toBe('ssh-rsa');
    expect(hostToken('h', 22)).toBe('h');
    expect(hostToken('h', 2222)).toBe('[h]:2222');
  });

  it('matches plain names, comma lists, wildcards, negations and [host]:port', () => {
    expect(hostsFieldMatches('a,b,gpu1', 'gpu1')).toBe(true);
    expect(hostsFieldMatches('GPU1', 'gpu1')).toBe(true);
    expect(hostsFieldMatches('*.internal,!bad.internal', 'gpu.internal')).toBe(true);
    expect(hostsFieldMatches('*.internal,!bad.internal', 'bad.internal')).toBe(false);
    expect(hostsFieldMatches('[gpu1]:2222', '[gpu1]:2222')).toBe(true);
    expect(hostsFieldMatches('gpu1', '[gpu1]:2222')).toBe(false);
    expect(hostsFieldMatches(hashed('[10.0.0.1]:2222'), '[10.0.0.1]:2222')).toBe(true);
    expect(hostsFieldMatches(hashed('10.0.0.1'), '[10.0.0.1]:2222')).toBe(false);
  });

  it('reports match, unknown, changed and revoked; ignores @cert-authority and comments', () => {
    const text = [
      '# comment',
      '',
      `gpu1,10.0.0.1 ${keyA.type} ${keyA.b64} comment here`,
      `[gpu2]:2222 ${keyA.type} ${keyA.b64}`,
      `${hashed('gpu3')} ${keyA.type} ${keyA.b64}`,
      `@cert-authority * ${keyB.type} ${keyB.b64}`,
      `@revoked gpu4 ${keyB.type} ${keyB.b64}`,
      `gpu4 ${keyB.type} ${keyB.b64}`,
      `gpu5 ${rsa.type} ${rsa.b64}`,
      'garbage line',
    ].join('\n');
    const entries = parseKnownHosts(text, 'kh');
    expect(entries).toHaveLength(7);
    expect(checkHostKey(entries, 'gpu1', 22, keyA.blob).status).toBe('match');
    expect(checkHostKey(entries, '10.0.0.1', 22, keyA.blob).status).toBe('match');
    expect(checkHostKey(entries, 'gpu2', 2222, keyA.blob).status).toBe('match');
    expect(checkHostKey(entries, 'gpu2', 22, keyA.blob).status).toBe('unknown');
    expect(checkHostKey(entries, 'gpu3', 22, keyA.blob).status).toBe('match');
    const changed = checkHostKey(entries, 'gpu1', 22, keyB.blob);
    expect(changed.status).toBe('changed');
    expect(changed.entry?.line).toBe(3);
    expect(checkHostKey(entries, 'anything', 22, keyB.blob).status).toBe('unknown'); // cert-authority ignored
    expect(checkHostKey(entries, 'gpu4', 22, keyB.blob).status).toBe('revoked');
    // another key type known for the host: a new type is unknown, as in OpenSSH
    expect(checkHostKey(entries, 'gpu5', 22, keyA.blob).status).toBe('unknown');
    expect(knownKeyTypes(entries, 'gpu5', 22)).toEqual(['ssh-rsa']);
  });

  it('offers the known key types’ algorithms first; a type it does not know (even `constructor`) adds none', () => {
    expect(hostKeyAlgorithmsFor(['ssh-rsa', 'ssh-ed25519'])).toEqual([
      'rsa-sha2-512',
      'rsa-sha2-256',
      'ssh-rsa',
      'ssh-ed25519',
    ]);
    // the type is a word read from a file: an object literal would answer these from Object.prototype
    expect(hostKeyAlgorithmsFor(['constructor', 'toString', '__proto__', 'unknown'])).toEqual([]);
  });

  it('refuses unknown hosts with the fingerprint and how to accept; accept-new appends', () => {
    const file = join(dir, 'sub', 'known_hosts');
    try {
      verifyHostKey({ host: 'gpu9', port: 2222, key: keyA.blob, files: [file], acceptNew: false });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(HostKeyError);
      const e = err as HostKeyError;
      expect(e.kind).toBe('unknown');
      expect(e.fingerprint).toBe(fingerprintSha256(keyA.blob));
      expect(e.file).toBe(file);
      expect(e.message).toMatch(/--accept-new/);
      expect(e.message).toContain(`ssh-keyscan -p 2222 -t ssh-ed25519 gpu9 >> ${file}`);
    }
    const r = verifyHostKey({ host: 'gpu9', port: 2222, key: keyA.blob, files: [file], acceptNew: true });
    expect(r).toMatchObject({ status: 'unknown', added: true });
    verifyHostKey({ host: 'gpu10', port: 22, key: keyA.blob, files: [file], acceptNew: true });
    expect(readFileSync(file, 'utf8')).toBe(
      `[gpu9]:2222 ${keyA.type} ${keyA.b64}\ngpu10 ${keyA.type} ${keyA.b64}\n`,
    );
    expect(
      verifyHostKey({ host: 'gpu9', port: 2222, key: keyA.blob, files: [file], acceptNew: false }).status,
    ).toBe('match');
    // OpenSSH itself agrees with what was written
    expect(() =>
      execFileSync('ssh-keygen', ['-F', '[gpu9]:2222', '-f', file], { stdio: 'ignore' }),
    ).not.toThrow();
  });

  it('never accepts a changed or revoked key, even with accept-new', () => {
    const file = join(dir, 'kh-changed');
    writeFileSync(file, `gpu1 ${keyA.type} ${keyA.b64}\n@revoked gpu2 ${keyA.type} ${keyA.b64}`);
    const attempt = (host: string) => {
      try {
        verifyHostKey({
          host,
          port: 22,
          key: host === 'gpu1' ? keyB.blob : keyA.blob,
          files: [file],
          acceptNew: true,
        });
      } catch (err) {
        return err as HostKeyError;
      }
      throw new Error('accepted');
    };
    expect(attempt('gpu1').kind).toBe('changed');
    expect(attempt('gpu1').message).toMatch(/CHANGED.*kh-changed:1/);
    expect(attempt('gpu2').kind).toBe('revoked');
    expect(readFileSync(file, 'utf8')).not.toContain(keyB.b64); // nothing appended
  });

  it('fails closed when known_hosts cannot be read (a missing file is just empty)', () => {
    const notAFile = join(dir, 'a-directory');
    mkdirSync(notAFile);
    const err = (() => {
      try {
        verifyHostKey({ host: 'gpu1', port: 22, key: keyA.blob, files: [notAFile], acceptNew: true });
      } catch (e) {
        return e as HostKeyError;
      }
      return null;
    })();
    expect(err?.kind).toBe('unreadable');
  });
});
