/**
 * The agent script's watcher records each worker torchrun starts (its RANK and LOCAL_RANK, read
 * from its own environment), on a real process tree. The workers here live 0.4 s, as those of a
 * short clean run do: a watcher that looked once a second, with two processes started per pid of
 * the box, recorded only some of them on a loaded machine (Slurm and --hosts runs in CI named one
 * rank of four).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeScript } from '../../src/runs/agent-script.js';
import type { RunSpec } from '../../src/runs/launcher.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-agent-watch-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// a torchrun stand-in: 4 workers with their ranks in their environment, gone after 0.4 s
const FAKE_TORCHRUN = `#!/bin/sh
for r in 0 1 2 3; do RANK=$((r + 4)) LOCAL_RANK=$r sleep 0.4 & done
wait
`;

describe("the agent's worker watcher", () => {
  it('records every worker of a short run, with its rank, local rank and pid', () => {
    const dir = join(work, 'run dir');
    execFileSync('mkdir', ['-p', dir]);
    const torchrun = join(work, 'torchrun');
    writeFileSync(torchrun, FAKE_TORCHRUN);
    chmodSync(torchrun, 0o755);
    const spec = {
      runId: 'r1',
      runDir: dir,
      argv: [torchrun, '--nproc_per_node', '4', 'train.py'],
      torchrun: { nprocPerNode: 4, commandWords: 1 },
    } as unknown as RunSpec;
    const place = { task: '1', node: 'node-b', nnodes: '2', endpoint: 'node-a:29500', id: '7' };
    writeFileSync(join(dir, 'node.sh'), nodeScript(spec, place));
    execFileSync('sh', [join(dir, 'node.sh')]);
    // the watcher is in the background: it ends once it saw the 4 workers or the agent is gone
    execFileSync('sh', ['-c', 'sleep 0.5']);
    const recs = readFileSync(join(dir, 'nodes.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { task: number; node: string; rank?: number; localRank?: number; pid: number },
      );
    expect(recs[0]).toMatchObject({ task: 1, node: 'node-b' });
    const workers = recs.filter((r) => r.rank !== undefined);
    expect(workers.map((w) => w.rank).sort()).toEqual([4, 5, 6, 7]);
    expect(workers.map((w) => w.localRank).sort()).toEqual([0, 1, 2, 3]);
    for (const w of workers) expect(w.pid).toBeGreaterThan(1);
    expect(new Set(workers.map((w) => w.pid)).size).toBe(4);
  });
});
