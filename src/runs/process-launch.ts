/**
 * What the two kinds whose run is one process tree on the target share (a PTY here, a detached
 * run): the trainer's pid from its pid file is what a stop, a dump and the listing act on.
 */
import { readExitCode, readPid } from '../ingest/launcher-files.js';
import { requireCommand } from '../targets/find-command.js';
import { NodeRoutedTarget } from '../targets/node-routed.js';
import { NodeShells } from '../targets/node-shell.js';
import type { Target } from '../targets/target.js';
import type { FollowerFactory } from './follower.js';
import type { ActiveLaunch, DumpAsk, LaunchContext, RunStatus } from './launch-kind.js';
import { attachCommand, stopWords } from './launch-kind.js';
import type { LaunchSpec } from './launch-spec.js';
import type { RunSpec } from './launcher.js';
import { handlersFor, SIGNUM } from './signals.js';
import { processRun, type StoppableRun } from './stop.js';

/** the rest of such a kind, besides how it starts, picks up and leaves a run: all on the session's target */
export const processKind = {
  place: (_l: LaunchSpec, label: string) => ({ label }),
  plan: (spec: RunSpec) => spec,
  follower: (_target: Target, _spec: RunSpec, plain: FollowerFactory) => plain,
  checkCommand: (target: Target, spec: RunSpec, o: { defaultCommand: boolean }) =>
    requireCommand(target, spec, o),
  gpuTarget: (target: Target) => target,
  reconnect: async (base: Target) => base,
  status: (target: Target, runDir: string) => processStatus(target, runDir),
};

/**
 * A launch of such a run, all but its terminal; `how` follows the target's label in the quit
 * prompt's words when quitting leaves it (` (detached)`).
 */
export function processActive(ctx: LaunchContext, how: string): Omit<ActiveLaunch, 'terminal'> {
  const { target, spec } = ctx;
  const nodeShells = simulatesNodes(spec) ? new NodeShells() : null;
  return {
    stoppable: () => processStoppable(ctx),
    requestDump: () => processDump(ctx),
    checksTarget: (nodeOf) => (nodeShells === null ? target : simulatedNodes(target, nodeShells, nodeOf)),
    line: () => null,
    quitWords: (q) =>
      q.leave
        ? `The run keeps running on ${q.targetLabel}${how}; re-attach with: ${attachCommand(q.targetLabel, spec.runId)}`
        : stopWords(q, spec.runDir),
    dispose: () => nodeShells?.close(),
  };
}

/** the many-rank demo spread over simulated nodes (`--ranks N --nodes M`) */
function simulatesNodes(spec: RunSpec): boolean {
  return spec.demo === true && spec.argv.includes('--nodes');
}

/**
 * The demo's simulated nodes are asked as a cluster's nodes are: /proc reads and signals of a
 * node's ranks in one command per node (by the ranks' node records), through a shell that stays
 * open per node as an SSH box's command shells do (src/targets/node-shell.ts), all on this one box.
 * A pid whose node is not recorded yet is asked on the box itself.
 */
function simulatedNodes(target: Target, shells: NodeShells, nodeOf: (pid: number) => string | null): Target {
  return new NodeRoutedTarget(
    target,
    async (node, argv) => (await shells.run(node, argv)) ?? target.exec(argv, { timeoutMs: 30_000 }),
    (pid) => nodeOf(pid) ?? 'this box',
    () => 'the simulated nodes',
  );
}

/**
 * A run picked up again that left no exit_code and whose process is gone (its nsa-dbg was killed and
 * took the trainer with it, the box rebooted) has ended, status unknown. Looked at twice, apart, so
 * a trainer that has just exited leaves its launcher time to write the status. (Only a run that is
 * one process tree here: a Slurm job's end is its scheduler's to say.)
 */
export async function endIfLost(ctx: LaunchContext, graceMs = 1500): Promise<void> {
  const read = (p: string) => ctx.target.readFile(p);
  for (let look = 0; look < 2; look++) {
    if (look > 0) await new Promise((r) => setTimeout(r, graceMs));
    if (ctx.exited()) return;
    const pid = await readPid(read, ctx.spec.runDir);
    if (pid === null) return;
    if ((await readExitCode(read, ctx.spec.runDir)) !== null) return;
    if (await ctx.target.isAlive(pid)) return;
  }
  ctx.events.ended(null);
}

/** the trainer's process tree; null when no pid file came within 2 s (it never started) */
export async function processStoppable(ctx: LaunchContext): Promise<StoppableRun | null> {
  const pid = ctx.pid() ?? (await ctx.waitForPid(2000));
  return pid === undefined ? null : processRun(ctx.target, pid);
}

/**
 * SIGUSR1 to every process of the run that has a handler for it (the trainer, each rank under
 * torchrun) — never to the shell or to a process that would die of it.
 */
async function processDump(ctx: LaunchContext): Promise<DumpAsk> {
  const pid = ctx.pid();
  if (pid === undefined) return { message: 'the trainer has not started yet: no pid', sent: false };
  const procs = await handlersFor(ctx.target, pid, SIGNUM.USR1!);
  if (!procs.length)
    return { message: (await pySpyDump(ctx.target, ctx.spec, pid)) ?? noHandler(pid), sent: false };
  for (const p of procs) await ctx.target.signal(p.pid, 'USR1');
  return {
    message: `SIGUSR1 → ${procs.map((p) => `pid ${p.pid}`).join(', ')}; waiting for stackdump_*.txt`,
    sent: true,
  };
}

/**
 * Without a SIGUSR1 handler a signal would kill the trainer; py-spy reads the stacks from outside
 * instead, when the box has it. Its output goes into the run dir like any other dump.
 */
async function pySpyDump(target: Target, spec: RunSpec, pid: number): Promise<string | null> {
  const has = await target.exec(['sh', '-c', 'command -v py-spy'], { timeoutMs: 10_000 });
  if (has.code !== 0) return null;
  const r = await target.exec(['py-spy', 'dump', '--pid', String(pid)], { timeoutMs: 30_000 });
  if (r.code !== 0) {
    const why = r.stderr.trim().split('\n').pop() ?? `exit ${r.code}`;
    return `no SIGUSR1 handler in pid ${pid}, and py-spy dump failed: ${why} (it needs ptrace: root, or kernel.yama.ptrace_scope=0)`;
  }
  const name = `pyspy_${Math.floor(Date.now() / 1000)}.pyspy.txt`;
  await target.writeFile(`${spec.runDir}/${name}`, r.stdout);
  return `no SIGUSR1 handler in pid ${pid}: took a py-spy dump instead (${name})`;
}

function noHandler(pid: number): string {
  return `no SIGUSR1 handler in pid ${pid} or its children yet (SigCgt): not sent, it would kill the trainer; install py-spy on the box (pip install py-spy) for dumps without a handler`;
}

/** exited (its exit_code), running or lost (its pid alive or not), or starting (no pid yet) */
export async function processStatus(target: Target, runDir: string): Promise<RunStatus> {
  const read = (p: string) => target.readFile(p);
  const exitCode = await readExitCode(read, runDir);
  const pid = await readPid(read, runDir);
  const withPid = pid !== null ? { pid } : {};
  if (exitCode !== null) return { status: 'exited', exitCode, ...withPid };
  if (pid === null) return { status: 'starting' };
  return { status: (await target.isAlive(pid)) ? 'running' : 'lost', pid };
}

/** a terminal that shows the run's output as it is written (for runs without a terminal of their own) */
export async function followOutput(target: Target, runDir: string, size: { cols: number; rows: number }) {
  const pty = await target.spawnPty({ argv: ['tail', '-n', '+1', '-F', `${runDir}/stdout.log`], ...size });
  return { pty, release: () => pty.close() };
}
