/**
 * Authentication in OpenSSH's order: the agent's keys first, then each identity file. An encrypted
 * key triggers the injected passphrase prompt. What the passphrase unlocks (the parsed key) lives
 * only in this process's memory, so reconnects neither ask again nor repeat the slow key
 * derivation; neither is ever written anywhere.
 */

import { readFile } from 'node:fs/promises';
import ssh2, { type AnyAuthMethod, type AuthHandlerMiddleware, type ParsedKey } from 'ssh2';
import type { HostSpec } from './ssh-config.js';

export type AskPassphrase = (keyPath: string) => Promise<string>;

const MAX_PASSPHRASE_TRIES = 3;

/** Keys unlocked with a typed passphrase during this process, by key path. Memory only. */
export type PassphraseCache = Map<string, ParsedKey>;

/** Load a private key for publickey auth; null to skip it (unreadable, not a key, no passphrase). */
async function loadKey(
  path: string,
  username: string,
  cache: PassphraseCache,
  ask: AskPassphrase | undefined,
  notes: string[],
): Promise<AnyAuthMethod | null> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch (err) {
    notes.push(`${path}: ${(err as Error).message}`);
    return null;
  }
  const plain = ssh2.utils.parseKey(data);
  if (!(plain instanceof Error)) return { type: 'publickey', username, key: data };
  if (!/encrypted|passphrase/i.test(plain.message)) {
    notes.push(`${path}: ${plain.message}`);
    return null;
  }
  const cached = cache.get(path);
  if (cached) return { type: 'publickey', username, key: cached };
  if (!ask) {
    notes.push(`${path}: encrypted and no passphrase prompt available`);
    return null;
  }
  for (let i = 0; i < MAX_PASSPHRASE_TRIES; i++) {
    let passphrase: string;
    try {
      passphrase = await ask(path);
    } catch {
      notes.push(`${path}: passphrase prompt cancelled`);
      return null;
    }
    const unlocked = ssh2.utils.parseKey(data, passphrase);
    if (!(unlocked instanceof Error)) {
      cache.set(path, unlocked);
      return { type: 'publickey', username, key: unlocked };
    }
  }
  notes.push(`${path}: wrong passphrase`);
  return null;
}

export interface AuthPlan {
  handler: AuthHandlerMiddleware;
  /** what was tried, for the failure message */
  describe(): string;
}

export function makeAuthPlan(
  spec: HostSpec,
  agentSocket: string | null | undefined,
  cache: PassphraseCache,
  ask: AskPassphrase | undefined,
): AuthPlan {
  const tried: string[] = [];
  const notes: string[] = [];
  const steps: Array<() => Promise<AnyAuthMethod | null>> = [];
  if (agentSocket && !spec.identitiesOnly) {
    steps.push(async () => {
      tried.push('ssh-agent');
      return { type: 'agent', username: spec.user, agent: agentSocket };
    });
  }
  for (const path of spec.identityFiles) {
    steps.push(async () => {
      tried.push(path);
      return loadKey(path, spec.user, cache, ask, notes);
    });
  }
  const handler: AuthHandlerMiddleware = (_methodsLeft, _partial, next) => {
    const advance = async (): Promise<void> => {
      for (let step = steps.shift(); step; step = steps.shift()) {
        const method = await step();
        if (method) return next(method);
      }
      // ssh2 treats `false` as "no more methods" (the type definitions omit it)
      next(false as unknown as AnyAuthMethod);
    };
    void advance();
  };
  return {
    handler,
    describe: () => {
      const what = tried.length ? `tried ${tried.join(', ')}` : 'no ssh-agent and no identity file found';
      return notes.length ? `${what} (${notes.join('; ')})` : what;
    },
  };
}
