import type { StopPolicy } from '../lanes/lane.js';
import type { Target } from '../targets/target.js';
import { listProcesses, processTree } from './signals.js';

export type StopStep = 'halt' | 'sigint' | 'sigkill';

/** what a stop acts on: the trainer's process, or a Slurm job (scancel) */
export interface StoppableRun {
  isAlive(): Promise<boolean>;
  /** SIGINT: KeyboardInterrupt in Python (torchrun passes it to its workers) */
  interrupt(): Promise<void>;
  /** SIGKILL of everything the run started */
  kill(): Promise<void>;
  /** `.HALT` where the trainer polls it, when that is more than one out dir (every host's) */
  halt?(): Promise<void>;
}

/** the trainer's process on a target, and its whole tree for the kill */
export function processRun(target: Target, pid: number): StoppableRun {
  return {
    isAlive: () => target.isAlive(pid),
    interrupt: () => target.signal(pid, 'INT').catch(() => undefined),
    kill: () => killTree(target, pid),
  };
}

export interface StopContext {
  /** where .HALT is written */
  target: Target;
  run: StoppableRun;
  outDir: string;
  policy: StopPolicy;
  /** true when the detector already declared a stall: a hung step never polls .HALT, skip it */
  stalled: boolean;
  /** resolves when the run has exited (the controller knows from exit_code / the PTY) */
  exited: () => boolean;
  onStep?: (step: StopStep) => void;
  /** injected for tests */
  pollMs?: number;
}

async function waitExit(ctx: StopContext, seconds: number): Promise<boolean> {
  const deadline = Date.now() + seconds * 1000;
  // exited() is free (the followers see exit_code); asking the target is a process (or an SSH
  // exec) each time, so that only happens about once a second
  for (let i = 0; Date.now() < deadline; i++) {
    if (ctx.exited()) return true;
    if (i % 10 === 0 && !(await ctx.run.isAlive())) return true;
    await new Promise((r) => setTimeout(r, ctx.pollMs ?? 100));
  }
  return ctx.exited() || !(await ctx.run.isAlive());
}

/**
 * nsa-vibe's stop ladder (reference §3): SIGTERM only dumps stacks, so the polite stop is `.HALT`
 * (polled once per step), then SIGINT (KeyboardInterrupt, works while Python runs), then SIGKILL of
 * the trainer and everything it started. Returns the step that ended it.
 */
export async function stopRun(ctx: StopContext): Promise<StopStep | 'already-exited'> {
  if (ctx.exited() || !(await ctx.run.isAlive())) return 'already-exited';
  if (ctx.policy.halt && !ctx.stalled) {
    ctx.onStep?.('halt');
    if (ctx.run.halt) await ctx.run.halt();
    else await ctx.target.writeFile(`${ctx.outDir}/.HALT`, 'halt: manual_stop\n');
    if (await waitExit(ctx, ctx.policy.haltWaitS)) return 'halt';
  }
  ctx.onStep?.('sigint');
  await ctx.run.interrupt();
  if (await waitExit(ctx, ctx.policy.sigintWaitS)) return 'sigint';
  ctx.onStep?.('sigkill');
  await ctx.run.kill();
  await waitExit(ctx, 5);
  return 'sigkill';
}

/** SIGKILL a process and everything it started, all at once (children first would let it respawn them). */
export async function killTree(target: Target, pid: number): Promise<void> {
  const tree = processTree(await listProcesses(target).catch(() => []), pid);
  const pids = tree.length ? tree.map((p) => p.pid) : [pid];
  await Promise.all(pids.map((p) => target.signal(p, 'KILL').catch(() => undefined)));
}
