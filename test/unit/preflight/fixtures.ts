/**
 * The preflight fixtures (test/fixtures/preflight/, captured on real H100 boxes: README there) and a
 * way to inject a fault into a captured `nvidia-smi -q`: the value of one key line of one GPU is
 * rewritten, everything else stays as the driver printed it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LaneAsk, ProbeOutput } from '../../../src/preflight/types.js';

export const DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'preflight');

export const fixture = (box: string, name: string) => readFileSync(join(DIR, box, name), 'utf8');

export const probe = (box: string, name: string): ProbeOutput =>
  JSON.parse(fixture(box, `probe-${name}.json`)) as ProbeOutput;

/**
 * The `n`th line (0-based, over the whole log) whose key is `key` gets `value`; throws when there is
 * no such line, so a capture that changed shape fails the test rather than injecting nothing.
 */
export function inject(text: string, key: string, value: string, n = 0): string {
  let seen = 0;
  let done = false;
  const out = text.split('\n').map((line) => {
    const m = /^(\s*)([^:]+?)(\s*): (.*)$/.exec(line);
    if (!m || m[2] !== key || done) return line;
    if (seen++ !== n) return line;
    done = true;
    return `${m[1]}${m[2]}${m[3]}: ${value}`;
  });
  if (!done) throw new Error(`no line ${n} with key ${key}`);
  return out.join('\n');
}

/** the lane asks as the device run made them (test/device/preflight.sh) */
export function ask(over: Partial<LaneAsk> = {}): LaneAsk {
  return {
    lane: '(none)',
    ranksPerNode: 1,
    ranksSource: 'lane (none): one process, no launcher',
    stackSignal: 12,
    runDir: '/root/.nsa-dbg/runs',
    outDir: '/root/.nsa-dbg/runs',
    outDirSource: 'out_dir: the run dir',
    ...over,
  };
}
