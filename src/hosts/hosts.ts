/**
 * `--hosts A,B,…`: one cell across several boxes without a scheduler, the way it is done by hand:
 * one detached torchrun agent per host, all meeting at a c10d rendezvous on the first host with the
 * run id as the rendezvous id. Each host gets a run dir of its own (a plain nsa-dbg run dir: its
 * launcher, pid, exit_code, stdout.log, the ranks' heartbeats and dumps), and the cell's folder on
 * this machine holds a byte-exact mirror of each under `hosts/<alias>/` beside what the engine reads
 * of the whole run (src/hosts/hosts-follower.ts).
 */

import { HOSTS_DIR } from '../ingest/run-files.js';
import { type AgentPlace, nodeScript } from '../runs/agent-script.js';
import type { HostEntry, HostsLaunch } from '../runs/launch-spec.js';
import type { RunSpec } from '../runs/launcher.js';
import { shQuote } from '../util/sh-quote.js';

export type { HostEntry };
/** a `--hosts` launch's settings (command.json's `launcher`) */
export type HostsSettings = Omit<HostsLaunch, 'kind'>;

/** a file name for an alias (`gpu-1`, `user@box:2222` → `user@box_2222`) */
export function safeAlias(alias: string): string {
  return alias.replace(/[^\w.@-]/g, '_');
}

export function hostRunDir(spec: Pick<RunSpec, 'runId'>, h: HostEntry): string {
  return `${h.runsRoot}/${spec.runId}-${safeAlias(h.alias)}`;
}

/** `hosts/<alias>` of the cell, relative */
export function mirrorSubdir(h: Pick<HostEntry, 'alias'>): string {
  return `${HOSTS_DIR}/${safeAlias(h.alias)}`;
}

/**
 * The run as host `i` runs it: the same command and env with the cell's paths moved to the host's
 * run dir (torchrun's --log_dir, `{runDir}` in a lane's env), and the torchrun agent started by the
 * host's node script.
 */
export function hostSpec(spec: RunSpec, s: HostsSettings, i: number): RunSpec {
  const h = s.hosts[i]!;
  const dir = hostRunDir(spec, h);
  const move = (v: string) => (v.startsWith(spec.runDir) ? dir + v.slice(spec.runDir.length) : v);
  return {
    ...spec,
    // its own id (= its dir's name): the host's tmux session and `attach --host` listing tell it apart
    runId: `${spec.runId}-${safeAlias(h.alias)}`,
    runDir: dir,
    outDir: dir,
    cwd: h.cwd,
    // a plain run dir of one detached agent: the cell's layout (hosts/, merged output) is not its
    // own, and `attach --host` to it follows that one agent
    layout: {},
    argv: spec.argv.map(move),
    env: Object.fromEntries(Object.entries(spec.env).map(([k, v]) => [k, move(v)])),
    launcher: { kind: 'detached' },
  };
}

/**
 * The node script of host `i` (src/runs/agent-script.ts) with its place written in, and the
 * rendezvous: the first host, the cell's run id as the rendezvous id.
 */
export function hostNodeScript(cell: RunSpec, s: HostsSettings, i: number): string {
  const place: AgentPlace = {
    task: String(i),
    node: shQuote(s.hosts[i]!.alias),
    nnodes: String(s.hosts.length),
    endpoint: shQuote(s.rdzvEndpoint),
    id: shQuote(cell.runId),
  };
  return nodeScript(hostSpec(cell, s, i), place);
}

/**
 * `a,b` → ['a', 'b']: at least two distinct hosts (one host is `--host`).
 * Throws a message for the user otherwise.
 */
export function parseHostList(text: string): string[] {
  const list = text
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  if (list.length < 2) throw new Error(`--hosts takes two or more hosts, comma-separated (got "${text}")`);
  const seen = new Set<string>();
  for (const h of list) {
    // an alias is written into the node records (JSON) and the node script as it is
    if (!/^[\w.@:[\]-]+$/.test(h))
      throw new Error(`--hosts: ${h} is not a host name (an ssh alias, host, user@host or user@host:port)`);
    const k = safeAlias(h);
    if (seen.has(k)) throw new Error(`--hosts: ${h} is given twice`);
    seen.add(k);
  }
  return list;
}
