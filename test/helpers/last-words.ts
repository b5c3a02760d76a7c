/**
 * What the last-words tests share, local (last-words.test.ts) and over `--host`
 * (ssh-last-words.test.ts): the lane, and three gloo ranks started by a shell instead of torchrun.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { freePort } from './ports.js';

export const LAST_WORDS_TRAINER = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'last_words.py');

/** a plain lane: the command is the user's (torchrun typed in it, or a single process) */
export const LAST_WORDS_LANE = `name: lw
description: last words
stepsFlag: ""
detector: { floorS: 3, spinConfirmS: 4, maxStepS: 60 }
stop: { halt: false, sigintWaitS: 5 }
acceptance: { finiteLoss: true, noStall: true }
`;

/**
 * three ranks of the trainer started by a shell, rank 2 SIGKILLing itself at step `atStep`: no
 * launcher line says that it died and nobody stops the others (its forked child holds their sockets
 * for 15 s)
 */
export async function shellRanksSigkill(atStep = 3): Promise<string[]> {
  const env = `NSA_DBG_TEST_AT_STEP=${atStep} MASTER_ADDR=127.0.0.1 MASTER_PORT=${await freePort()} WORLD_SIZE=3 RANK=$r`;
  return [
    'sh',
    '-c',
    `for r in 0 1 2; do ${env} /usr/bin/python3 -u '${LAST_WORDS_TRAINER}' sigkill & done; wait`,
  ];
}

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, read field by field
type Any = any;

/** the ranks the teardown snapshot found alive (not gone, not a zombie) */
export const aliveInSnapshot = (r: Any): number[] =>
  (r.teardown.ranks as Any[]).filter((t) => ['S', 'R', 'D'].includes(t.state)).map((t) => t.rank);

/** only the liveness check could see rank 2 gone: it took the snapshot, with 0 and 1 alive */
export function expectSeenByLivenessCheck(r: Any): void {
  expect(r.teardown.trigger).toBe('rank 2 exited');
  expect(aliveInSnapshot(r), JSON.stringify(r.teardown)).toEqual([0, 1]);
  expect(r.summary).toMatch(/when rank 2 exited, (?:ranks 0 and 1 were|rank 0 was) in state/);
}
