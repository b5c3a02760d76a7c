/**
 * The launch kind `hosts` (`--hosts A,B,…`): one detached torchrun agent per host over SSH, the
 * cell's folder on this machine (src/hosts/hosts.ts). Each host has its own connection: the
 * follower mirrors every host's run dir and merges their output, a worker's /proc facts and
 * signals go over its host's connection, a stop acts on every host. The agents outlive nsa-dbg;
 * `attach` reconnects to every host and resumes every mirror where the cell's copy ends.
 */
import { EXIT_CODE_FILE, exitCodeOf, LAUNCH_FILE, PID_FILE, readExitCode } from '../ingest/launcher-files.js';
import { hostsLayout } from '../ingest/run-files.js';
import type { ActiveLaunch, LaunchContext, LaunchKind } from '../runs/launch-kind.js';
import { attachCommand, requireTorchrun, stopWords, WORKER_FAILURE_GRACE_MS } from '../runs/launch-kind.js';
import type { HostsLaunch } from '../runs/launch-spec.js';
import { followOutput } from '../runs/process-launch.js';
import { mirrorSubdir } from './hosts.js';
import { HostsFollower } from './hosts-follower.js';
import { followedHosts, hostOfFile, hostsStoppable, launchHosts } from './hosts-run.js';
import { connectEach, HostsTarget, hostsTargetOf } from './hosts-target.js';

function active(ctx: LaunchContext<HostsLaunch>): ActiveLaunch {
  const { spec, events } = ctx;
  const target = hostsTargetOf(ctx.target);
  const aliases = spec.launcher.hosts.map((h) => h.alias);
  /** each host's agent as far as its mirrored files tell: up, or how it exited */
  const state = new Map<string, string>();
  const exitText = new Map<string, string>();
  return {
    noteFile(name, chunk) {
      const up = hostOfFile(spec, name, PID_FILE);
      if (up !== null && !state.has(up)) {
        // the first agent is up: the run is running (the agents' pids are never signalled here)
        state.set(up, 'up');
        events.running();
        events.changed();
        return;
      }
      const ended = hostOfFile(spec, name, EXIT_CODE_FILE);
      if (ended === null) return;
      const text = (exitText.get(ended) ?? '') + chunk.toString('utf8');
      exitText.set(ended, text);
      const code = exitCodeOf(text);
      // the launcher writes it whole (tmp + rename): a line with a number is the agent's status
      if (!text.endsWith('\n') || code === null) return;
      state.set(ended, `exited ${code}`);
      events.changed();
      events.agentExited(ended, code);
    },
    // the cell's merged output, on this machine
    terminal: (size) => followOutput(target.local, spec.runDir, size),
    stoppable: async () => hostsStoppable(target, spec),
    requestDump: async () => ({
      message: 'a run on several hosts: its ranks are asked one by one once their heartbeats name their pids',
      sent: false,
    }),
    checksTarget: (nodeOfPid) => target.routed(nodeOfPid),
    line: () => `hosts ${aliases.map((a) => `${a} ${state.get(a) ?? 'starting'}`).join(', ')}`,
    quitWords: (q) =>
      q.leave
        ? `The run keeps running on every host (${aliases.join(', ')}); re-attach with: ${attachCommand('local', spec.runId)}`
        : stopWords(q, spec.runDir, ` on every host (${aliases.join(', ')})`),
    dispose: () => {},
  };
}

export const hostsKind: LaunchKind<HostsLaunch> = {
  place: (launch) => ({ label: launch.hosts.map((h) => h.alias).join(',') }),
  plan(spec) {
    requireTorchrun(spec, '--hosts');
    return { ...spec, layout: { ...spec.layout, ...hostsLayout(spec.torchrun?.nprocPerNode ?? 1) } };
  },
  async start(ctx, size) {
    const target = hostsTargetOf(ctx.target);
    const info = await launchHosts(target, ctx.spec, size);
    await target.writeFile(`${ctx.spec.runDir}/${LAUNCH_FILE}`, `${JSON.stringify(info, null, 2)}\n`);
    return active(ctx);
  },
  attach: async (ctx) => active(ctx),
  follower(target, spec) {
    const hosts = hostsTargetOf(target);
    return (_t, dir, onChunk) => new HostsFollower(hosts.local, dir, followedHosts(hosts, spec), onChunk);
  },
  acrossNodes: { failureGraceMs: WORKER_FAILURE_GRACE_MS },
  // a run this nsa-dbg started is stopped on every host, like a local one; one picked up is left
  leavesRunningOnQuit: (attached) => attached,
  // the GPU panel shows the first host's GPUs (the rendezvous host)
  gpuTarget: (target) => hostsTargetOf(target).hosts[0]!.target,
  async reconnect(base, spec, connect) {
    const aliases = spec.launcher.hosts.map((h) => h.alias);
    const hosts = await connectEach(aliases, async (alias) => ({ alias, target: await connect(alias) }));
    return new HostsTarget(base, hosts);
  },
  async status(target, runDir, spec) {
    const exitCode = await readExitCode((p) => target.readFile(p), runDir);
    if (exitCode !== null) return { status: 'exited', exitCode };
    // the cell is on this machine; its agents are not asked here (attach reconnects to them)
    const has = async (h: { alias: string }, file: string) =>
      (await target.readFile(`${runDir}/${mirrorSubdir(h)}/${file}`).catch(() => null)) !== null;
    const hosts = spec.launcher.hosts;
    const up = (await Promise.all(hosts.map((h) => has(h, PID_FILE)))).filter(Boolean).length;
    const ended = (await Promise.all(hosts.map((h) => has(h, EXIT_CODE_FILE)))).filter(Boolean).length;
    const note = `hosts ${hosts.map((h) => h.alias).join(',')}`;
    if (up === 0) return { status: 'starting', note };
    return { status: 'running', note: `${note}: ${up} agent(s) seen up, ${ended} ended, as last mirrored` };
  },
};
