/**
 * One word per state, everywhere a person reads it: the header's banner upper-cases the verdict's
 * own name (`hang` → HANG), so the heartbeat banner, the notebook's status line and the README say
 * HANG too, never a second word (STALL) for the same state. And the README says when SUSPECT shows.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stallPhrases } from '../../panels/HeartbeatPanel.js';
import { liveLine } from '../../src/notebook/live-line.js';
import { emptyDashboardState } from '../../src/session/state.js';
import { STALLED } from './sample-state.js';

const README = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
const HANG = 'hang'.toUpperCase();

describe('the words for a run that needs attention', () => {
  it("the heartbeat banner and the notebook's status line say the verdict's word", () => {
    expect(stallPhrases({ ...STALLED, stall: { ...STALLED.stall!, hang: true } })[0]).toMatch(
      new RegExp(`^${HANG} rank 0`),
    );
    const s = emptyDashboardState({ runId: 'r', runState: 'running', step: 6, stepsDone: 5 });
    expect(
      liveLine('c1', 'baseline', { ...s, verdict: { verdict: 'hang', summary: 'hang at step 6' } }),
    ).toMatch(new RegExp(` · ${HANG}: hang at step 6$`));
  });

  it('the README uses the same words and no other for them', () => {
    for (const word of [HANG, 'SUSPECT', 'BUSY']) expect(README).toContain(word);
    expect(README).not.toMatch(/\bSTALL\b/);
  });

  it('the README does not promise SUSPECT at once: it comes once the silence passes the threshold', () => {
    expect(README).not.toMatch(/SUSPECT at once/);
    expect(README).toMatch(/once the silence passes the detector's threshold[^.]*it is SUSPECT/);
  });
});
