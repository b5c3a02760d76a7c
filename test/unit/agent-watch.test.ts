/**
 * The agent script's watcher records each worker torchrun starts (its RANK and LOCAL_RANK, read
 * from its own environment), on a real process tree. The workers here live 1.5 s, shorter than any
 * real worker (importing torch alone takes longer): a watcher that looked once a second, with two
 * processes started per pid of the box, recorded only some of them on a loaded machine (Slurm and
 * --hosts runs in CI named one rank of four). The watcher runs in the background and may still be
 * writing when the agent has exited: the test waits for its records, not for a fixed time.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeScript } from '../../src/runs/agent-script.js';
import type { RunSpec } from '../../src/runs/launcher.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-agent-watch-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// a torchrun stand-in: 4 workers with their ranks in their environment, gone after 1.5 s
const FAKE_TORCHRUN = `#!/bin/sh
for r in 0 1 2 3; do RANK=$((r + 4)) LOCAL_RANK=$r sleep 1.5 & done
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
    // the watcher is in the background: it ends once it saw the 4 workers or the agent is gone,
    // and its last records may come after the agent's exit (5 records: the agent's and 4 workers')
    const file = join(dir, 'nodes.jsonl');
    const lines = () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').length : 0);
    for (let t = 0; t < 100 && lines() < 5; t++) execFileSync('sh', ['-c', 'sleep 0.1']);
    const recs = readFileSync(file, 'utf8')
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
