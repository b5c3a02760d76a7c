/**
 * A trial's key: the hash of everything that decides what runs and how it is judged, so a trial
 * with the same resolved env is answered from the cell that already ran it, in any later session.
 */
import { createHash } from 'node:crypto';
import type { Lane } from '../lanes/lane.js';
import type { Side } from './delta.js';

export interface KeyParts {
  side: Side;
  /** the lane the trial is run from (its command, step format, acceptance) */
  lane: Pick<Lane, 'name' | 'command' | 'stepsFlag' | 'stepRegex' | 'acceptance' | 'detector' | 'launcher'>;
  /** the trainer command after `--`, when given */
  command?: string[];
  steps?: number;
  demo: boolean;
  stepMs?: number;
  /** where the trial runs: "local", user@host, slurm:local, node-a,node-b */
  target: string;
  /** what else of the target decides how a run goes (a Slurm job's nodes and options) */
  launch?: Record<string, unknown>;
}

/** JSON with object keys sorted, so equal values always hash alike */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v ?? null);
}

export function trialKey(p: KeyParts): string {
  const { name, command, stepsFlag, stepRegex, acceptance, detector, launcher } = p.lane;
  const doc = {
    env: p.side.env,
    args: p.side.args,
    lane: { name, command, stepsFlag, stepRegex, acceptance, detector, launcher },
    command: p.command?.length ? p.command : undefined,
    steps: p.steps,
    demo: p.demo,
    stepMs: p.stepMs,
    target: p.target,
    launch: p.launch,
  };
  return createHash('sha256').update(canonical(doc)).digest('hex').slice(0, 16);
}
