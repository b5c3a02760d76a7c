// The demo's simulated nodes are asked through one shell each (the SSH command shells' loop, run
// here by a real `sh`): a node's commands answer in order with their exact output and status, many
// nodes answer side by side, and a shell that dies is opened again.
import { afterEach, describe, expect, it } from 'vitest';
import { NodeShells } from '../../../src/targets/node-shell.js';

let shells: NodeShells | null = null;
/** the loop's pid: the parent of the `sh` that runs each request's script (a `sh -c` argv runs in it) */
const LOOP_PID = ['sh', '-c', 'echo $PPID'];
afterEach(() => shells?.close());

describe('NodeShells', () => {
  it('runs argv on a node: stdout, stderr and the exit status, quoting kept', async () => {
    shells = new NodeShells();
    const r = await shells.run('node-00', [
      'sh',
      '-c',
      'printf "%s|" "$@"; echo err >&2; exit 3',
      'sh',
      "it's",
      'a b',
      '$HOME',
    ]);
    expect(r).toEqual({ code: 3, stdout: "it's|a b|$HOME|", stderr: 'err\n' });
  });

  it('keeps one shell per node, answering each command in order', async () => {
    shells = new NodeShells();
    const pids = await Promise.all(
      Array.from({ length: 12 }, (_, i) => shells!.run(`node-${i % 3}`, LOOP_PID)),
    );
    const byNode = new Map<number, Set<string>>();
    pids.forEach((r, i) => {
      const set = byNode.get(i % 3) ?? new Set<string>();
      set.add(r!.stdout.trim());
      byNode.set(i % 3, set);
    });
    // one loop per node, three in all
    for (const set of byNode.values()) expect(set.size).toBe(1);
    expect(new Set([...byNode.values()].map((s) => [...s][0])).size).toBe(3);
  });

  it('opens the shell again after it died', async () => {
    shells = new NodeShells();
    const loop = (await shells.run('n', LOOP_PID))!.stdout.trim();
    // the next command comes before or after the death is noticed: either way it runs
    process.kill(Number(loop), 'SIGKILL');
    const again = await shells.run('n', ['echo', 'ok']);
    expect(again?.stdout).toBe('ok\n');
  });
});
