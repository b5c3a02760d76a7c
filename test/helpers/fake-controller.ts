/**
 * An in-memory SessionController for UI tests: records every call, lets the test push snapshots,
 * and answers with configurable canned replies.
 */
import {
  type DashboardState,
  emptyDashboardState,
  type LaneSummary,
  type SessionController,
} from '../../src/session/state.js';

export interface FakeControllerOptions {
  lanes?: LaneSummary[];
  dumpReply?: string;
  consequence?: string;
}

export type Call =
  | { method: 'requestDump' }
  | { method: 'switchLane'; lane: string }
  | { method: 'quit' }
  | { method: 'sampleHotFrames' }
  | { method: 'killNow' };

export const DEFAULT_LANES: LaneSummary[] = [
  {
    name: 'baseline',
    description: 'runbook smoke defaults, sequential prefill (stalls after step 5)',
    env: {
      NSA_TB_DISABLE: '1',
      NSA_DISABLE_CSV_LOGS: '1',
      NSA_HEARTBEAT_EVERY: '1',
      NSA_DISABLE_AUX_STATS: '1',
    },
  },
  {
    name: 'batched-prefill',
    description: 'baseline plus the batched prefill fix',
    env: { NSA_DISABLE_AUX_STATS: '1', NSA_PREFILL_BATCHED: '1' },
  },
  {
    name: 'conservative',
    description: 'SDPA everywhere, no FA2, no Triton selection',
    env: { NSA_USE_FA2: '0' },
  },
  { name: 'fp32', description: 'fp32 precision to rule out bf16 overflow', env: { NSA_PRECISION: 'fp32' } },
  { name: 'anomaly', description: 'torch anomaly detection, slow', env: { NSA_DETECT_ANOMALY: '1' } },
];

export class FakeController implements SessionController {
  readonly calls: Call[] = [];
  private state: DashboardState;
  private readonly subscribers = new Set<(s: DashboardState) => void>();
  private readonly opts: Required<FakeControllerOptions>;

  constructor(initial: DashboardState = emptyDashboardState(), opts: FakeControllerOptions = {}) {
    this.state = initial;
    this.opts = {
      lanes: opts.lanes ?? DEFAULT_LANES,
      dumpReply: opts.dumpReply ?? 'SIGUSR1 sent to pid 4162; dump stackdump_1795315501.txt',
      consequence: opts.consequence ?? 'The local run (pid 4162) will be stopped: .HALT, then SIGINT.',
    };
  }

  /** Publish a new snapshot (merged over the current one), as the engine does at ≤ 20 Hz. */
  push(next: Partial<DashboardState>): void {
    this.state = { ...this.state, ...next };
    for (const cb of this.subscribers) cb(this.state);
  }

  subscriberCount(): number {
    return this.subscribers.size;
  }

  getState(): DashboardState {
    return this.state;
  }

  subscribe(cb: (s: DashboardState) => void): () => void {
    this.subscribers.add(cb);
    return () => this.subscribers.delete(cb);
  }

  lanes(): LaneSummary[] {
    return this.opts.lanes;
  }

  async requestDump(): Promise<string> {
    this.calls.push({ method: 'requestDump' });
    return this.opts.dumpReply;
  }

  async switchLane(lane: string): Promise<void> {
    this.calls.push({ method: 'switchLane', lane });
    this.push({ lane, runState: 'starting', step: 0 });
  }

  async openTerminal(): Promise<string> {
    this.calls.push({ method: 'openTerminal' } as never);
    return 'no terminal in tests';
  }

  quitConsequence(): string {
    return this.opts.consequence;
  }

  async sampleHotFrames(): Promise<string> {
    this.calls.push({ method: 'sampleHotFrames' });
    return 'sampling 10 stacks, 1.5 s apart';
  }

  async killNow(): Promise<void> {
    this.calls.push({ method: 'killNow' });
  }

  async quit(): Promise<void> {
    this.calls.push({ method: 'quit' });
  }
}
