/**
 * Starting and stopping the agents of a `--hosts` run. Each host's agent is started detached (tmux
 * or setsid+nohup, like any remote run), so a dropped link or a killed nsa-dbg never signals it. A
 * stop acts on every host at once: `.HALT` into each out dir, SIGINT to each torchrun agent (it
 * passes the signal on to its workers), then SIGKILL of each agent's process tree.
 */
import { join } from 'node:path';
import { COMMAND_FILE, readPid } from '../ingest/launcher-files.js';
import { NODE_SCRIPT } from '../runs/agent-script.js';
import { type LaunchInfo, launchDetached } from '../runs/detached.js';
import type { HostsLaunch } from '../runs/launch-spec.js';
import type { RunSpec } from '../runs/launcher.js';
import { installStackHook } from '../runs/run-env.js';
import { killTree, type StoppableRun } from '../runs/stop.js';
import type { Target } from '../targets/target.js';
import { debugLog } from '../util/debug-log.js';
import { hostNodeScript, hostRunDir, hostSpec, mirrorSubdir } from './hosts.js';
import type { FollowedHost } from './hosts-follower.js';
import type { HostsTarget } from './hosts-target.js';

/** a `--hosts` cell's spec */
export type HostsRunSpec = RunSpec & { launcher: HostsLaunch };

/** what the cell's launch.json records: each host's run dir and how its agent was detached */
export interface HostsLaunchInfo {
  mode: 'hosts';
  hosts: Array<{ alias: string; runDir: string; launch: LaunchInfo }>;
}

/** each host with its connection and run dir, for the follower */
export function followedHosts(target: HostsTarget, spec: HostsRunSpec): FollowedHost[] {
  return spec.launcher.hosts.map((entry) => ({
    entry,
    target: target.of(entry),
    runDir: hostRunDir(spec, entry),
  }));
}

/**
 * Write each host's run dir (command.json, node.sh, run.sh) and start its agent. The rendezvous host
 * goes first; the others follow at once (c10d waits for all of them).
 */
export async function launchHosts(
  target: HostsTarget,
  spec: HostsRunSpec,
  size: { cols: number; rows: number },
): Promise<HostsLaunchInfo> {
  const s = spec.launcher;
  const out: HostsLaunchInfo = { mode: 'hosts', hosts: [] };
  for (let i = 0; i < s.hosts.length; i++) {
    const entry = s.hosts[i]!;
    const t = target.of(entry);
    const host = hostSpec(spec, s, i);
    await t.writeFile(`${host.runDir}/${COMMAND_FILE}`, `${JSON.stringify(host, null, 2)}\n`);
    await installStackHook(t, host);
    await t.writeFile(`${host.runDir}/${NODE_SCRIPT}`, hostNodeScript(spec, s, i));
    // the host's launcher runs its node script, which execs the torchrun agent
    const agent = { ...host, argv: ['sh', `${host.runDir}/${NODE_SCRIPT}`] };
    const launch = await launchDetached(t, agent, size, 'auto').catch((e: Error) => {
      throw new Error(`could not start the agent on ${entry.alias}: ${e.message}`);
    });
    debugLog(`hosts: agent ${i} on ${entry.alias} (${launch.mode}) in ${host.runDir}`);
    out.hosts.push({ alias: entry.alias, runDir: host.runDir, launch });
  }
  return out;
}

/** the torchrun agent's pid on each host (its run dir's `pid`), where it has one yet */
async function agentPids(
  target: HostsTarget,
  spec: HostsRunSpec,
): Promise<Array<{ t: Target; pid: number }>> {
  const found = await Promise.all(
    followedHosts(target, spec).map(async (h) => {
      const pid = await readPid((p) => h.target.readFile(p), h.runDir);
      return pid !== null ? { t: h.target, pid } : null;
    }),
  );
  return found.filter((x): x is { t: Target; pid: number } => x !== null);
}

/** what a stop acts on: every host's agent */
export function hostsStoppable(target: HostsTarget, spec: HostsRunSpec): StoppableRun {
  const eachAgent = async <T>(f: (t: Target, pid: number) => Promise<T>) =>
    Promise.all((await agentPids(target, spec)).map((a) => f(a.t, a.pid)));
  return {
    isAlive: async () => (await eachAgent((t, pid) => t.isAlive(pid).catch(() => false))).some(Boolean),
    interrupt: async () => {
      await eachAgent((t, pid) => t.signal(pid, 'INT').catch(() => undefined));
    },
    kill: async () => {
      await eachAgent(killTree);
    },
    halt: async () => {
      await Promise.all(
        followedHosts(target, spec).map((h) =>
          h.target.writeFile(`${h.runDir}/.HALT`, 'halt: manual_stop\n').catch(() => undefined),
        ),
      );
    },
  };
}

/** the host whose run-dir file `file` a chunk's name is (`hosts/<alias>/<file>`), or null */
export function hostOfFile(spec: HostsRunSpec, name: string, file: string): string | null {
  return spec.launcher.hosts.find((h) => name === join(mirrorSubdir(h), file))?.alias ?? null;
}
