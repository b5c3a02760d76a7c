// A hang of 256 ranks on 32 simulated nodes, through the built CLI: `nsa-dbg run --headless --json
// --demo --ranks 256 --nodes 32 --lane demo-rank-stall`. 256 real rank processes, each with nsa-dbg's
// stack hook; the demo's parent records them on 32 nodes as a cluster's agents do, and nsa-dbg asks
// each node with one command per round. Before the fix this never concluded: the prober's ~500
// records a round went out one shell each and fell further behind every round, each silent rank's
// judgement scanned every dump and every request (the engine had no CPU left), and the stop waited
// for no stack request to be in flight while new ones kept starting. The speed is the bench's
// (`npm run bench`, ranksN); this test holds the outcome: a verdict, the culprit, every rank's stack,
// words that do not grow with the rank count, and the same verdict from `analyze` of the folder.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-scale-256-'));
const env = { NSA_DBG_HOME: join(work, 'home'), NSA_DBG_LOG: join(work, 'engine.log') };
afterAll(() => rmSync(work, { recursive: true, force: true }));
const engineLogTail = () => {
  try {
    return readFileSync(env.NSA_DBG_LOG, 'utf8').slice(-6000);
  } catch {
    return '(no engine log)';
  }
};

/** where each rank's heartbeats stop, grouped: "250 at step 2 beat; ranks 17,33 at step 1 progress" */
const heartbeatsTold = () => {
  try {
    return heartbeatGroups();
  } catch (e) {
    return `heartbeat files not read: ${(e as Error).message}`;
  }
};
const heartbeatGroups = () => {
  const last = new Map<string, number[]>();
  let files = 0;
  for (const f of readdirSync(join(work, 'runs'), { recursive: true, encoding: 'utf8' })) {
    const m = /heartbeat_rank(\d+)\.jsonl$/.exec(f);
    if (m === null) continue;
    files++;
    const lines = readFileSync(join(work, 'runs', f), 'utf8')
      .trim()
      .split('\n');
    let key = 'no record';
    try {
      const r = JSON.parse(lines[lines.length - 1]!);
      key = `step ${r.step} ${r.msg} at ${r.ts}`.replace(/\.\d+$/, '');
    } catch {}
    last.set(key, [...(last.get(key) ?? []), Number(m[1])]);
  }
  const groups = [...last].sort((a, b) => b[1].length - a[1].length);
  const told = groups.map(
    ([k, r]) => `${r.length} (${r.slice(0, 4).join(',')}${r.length > 4 ? ',…' : ''}) ${k}`,
  );
  return `heartbeat files: ${files}; last records: ${told.slice(0, 12).join('; ')}`;
};

// biome-ignore lint/suspicious/noExplicitAny: the verdict JSON
type Json = any;

describe('256 ranks on 32 simulated nodes', () => {
  it('a hang on rank 255 is concluded with every rank stack, in words that do not grow per rank', async () => {
    const run = await runCli(
      [
        'run',
        '--headless',
        '--json',
        '--demo',
        '--ranks',
        '256',
        '--nodes',
        '32',
        '--lane',
        'demo-rank-stall',
        '--steps',
        '8',
        '--step-ms',
        '200',
        '--runs-dir',
        join(work, 'runs'),
      ],
      // stopped by SIGTERM if it has not concluded by then: it reports what it knew, and the
      // engine's log says how far it came (a failure here must say why)
      { env, termMs: 480_000, timeoutMs: 540_000 },
    );
    const last = run.stdout.trim().split('\n').pop() ?? '';
    const story = () =>
      `${run.stderr.slice(-800)}\n${engineLogTail()}\n${heartbeatsTold()}\n${last.slice(0, 3000)}`;
    if (!last.startsWith('{')) throw new Error(`no JSON (exit ${run.code}): ${story()}`);
    const live: Json = JSON.parse(last);
    if (run.code !== 1 || live.verdict !== 'hang') throw new Error(`exit ${run.code}: ${story()}`);
    expect(live.verdict).toBe('hang');
    expect(live.stall).toMatchObject({ rank: 255, step: 3 });
    expect(live.stall.rootCause.rank).toBe(255);
    expect(live.stall.rootCause.waiting).toHaveLength(255);
    // every rank's stack: the culprit's in its own code, the others' in the collective
    // (a trainer's own dump whose request was not recorded has no rank: not a rank's stack)
    const ranksWithDump = new Set((live.dumps as Json[]).map((d) => d.rank).filter((r) => r !== undefined));
    expect(ranksWithDump.size).toBe(256);
    expect(live.stackDiff.noDump).toEqual([]);
    const odd = (live.stackDiff.groups as Json[]).find((g) => g.odd);
    expect(odd).toMatchObject({ ranks: [255], inCollective: false });
    // the culprit's node, from the ranks' node records
    expect(live.summary).toContain('rank 255 on sim-node-31');
    // rank sets as ranges: the sentence is the same length at 256 ranks as at 4
    expect(live.summary).toContain('255 ranks (0–254)');
    expect(live.summary.length).toBeLessThan(600);
    expect(live.summary).not.toMatch(/\b0, 1, 2\b/);
    // the engine concluded on its own (it was confirmed, then stopped for the evidence)
    const log = readFileSync(env.NSA_DBG_LOG, 'utf8');
    expect(log).toMatch(/hang confirmed, rank \d+/);
    expect(log).toMatch(/every silent rank asked for its stack/);
    // the folder says the same offline
    const an = await runCli(['analyze', String(live.runDir), '--json'], { env, timeoutMs: 120_000 });
    const offline: Json = JSON.parse(an.stdout);
    expect(offline.verdict).toBe('hang');
    expect(offline.stall.rootCause.rank).toBe(255);
    expect(new Set((offline.dumps as Json[]).map((d) => d.rank).filter((r) => r !== undefined)).size).toBe(
      256,
    );
  }, 720_000);
});
