import type { NewCell } from '../../../src/notebook/reducer.js';

/** a minimal finished-looking cell for reducer and store tests */
export function newCell(lane: string, extra: Partial<NewCell> = {}): NewCell {
  return {
    created: '2026-01-01T00:00:00.000Z',
    target: 'local',
    lane: {
      name: lane,
      description: `${lane} lane`,
      source: '',
      sourceHash: '',
      env: {},
      args: [],
      acceptance: { finiteLoss: true, noStall: true },
    },
    env: { NSA_PREFILL_BATCHED: '0' },
    command: ['python3', '-u', 'train.py'],
    cwd: '.',
    demo: true,
    runId: `run-${lane}`,
    runDir: `runs/run-${lane}`,
    evidenceDir: `runs/run-${lane}`,
    state: 'running',
    evidence: [],
    series: { loss: [], toks: [] },
    ...extra,
  };
}
