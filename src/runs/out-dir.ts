/**
 * The trainer's own out_dir: where it writes heartbeats, dumps, its CSV table and final metrics, when
 * that is not the run dir. It is found without editing configs (out-dir-of.ts), marked before the
 * run starts (its files and their sizes: the folder is reused from run to run), and copied as it
 * grows into the run dir's `out/`, so the run folder holds this run's evidence and nothing older,
 * read by the same reader live and in `analyze`.
 */
import { join } from 'node:path';
import { isTempFile, OUT_COPY_DIR } from '../ingest/run-files.js';
import type { Target } from '../targets/target.js';
import { parseJsonObject } from '../util/json-object.js';
import { shQuote } from '../util/sh-quote.js';
import type { Follower } from './follower.js';
import { EvidenceMirror, type FileMark, mirroredFiles } from './mirror.js';

/** the marks of the out_dir's files before the run, kept in the run dir (an attach resumes from them) */
export const OUT_BASELINE_FILE = 'out-baseline.json';

/** every file of the directory with its size and mtime (an empty map when it does not exist yet) */
export async function markFiles(target: Target, dir: string): Promise<Record<string, FileMark>> {
  const r = await target.exec([
    'sh',
    '-c',
    `[ -d ${shQuote(dir)} ] || exit 0; cd ${shQuote(dir)} && find . -maxdepth 1 -type f -exec stat -c '%s %Y %n' {} +`,
  ]);
  const out: Record<string, FileMark> = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^(\d+) (\d+) \.\/(.+)$/.exec(line);
    if (m !== null) out[m[3]!] = { size: Number(m[1]), mtime: Number(m[2]) };
  }
  return out;
}

/** mark the out_dir before the launch and record the marks in the run dir */
export async function markOutDir(
  target: Target,
  runDir: string,
  outDir: string,
): Promise<Record<string, FileMark>> {
  const marks = await markFiles(target, outDir);
  await target.writeFile(`${runDir}/${OUT_BASELINE_FILE}`, `${JSON.stringify(marks)}\n`);
  return marks;
}

/** the marks recorded at the launch (none: an attach to a run from before they were recorded) */
export async function readOutMarks(target: Target, runDir: string): Promise<Record<string, FileMark>> {
  const b = await target.readFile(`${runDir}/${OUT_BASELINE_FILE}`).catch(() => null);
  const marks = b === null ? null : parseJsonObject(b.toString('utf8'));
  return (marks ?? {}) as Record<string, FileMark>;
}

/**
 * Follows the out_dir into `copyDir` (the run dir's `out/` on this machine): what changed since the
 * marks, by name in the copy (`out/<name>`).
 */
export function outDirFollower(
  target: Target,
  outDir: string,
  localRunDir: string,
  marks: () => Promise<Record<string, FileMark>>,
  onChunk: (name: string, chunk: Buffer, replace?: boolean) => void,
): Follower {
  let mirror: EvidenceMirror | null = null;
  return {
    async start() {
      const copy = join(localRunDir, OUT_COPY_DIR);
      // an attach: what an earlier nsa-dbg copied is read first, then the copy goes on from there
      for (const [name, b] of mirroredFiles(copy, isTempFile)) onChunk(`${OUT_COPY_DIR}/${name}`, b);
      mirror = new EvidenceMirror(target, outDir, copy, {
        baseline: await marks(),
        onChunk: (name, chunk, replace) => onChunk(`${OUT_COPY_DIR}/${name}`, chunk, replace),
      });
      await mirror.start();
    },
    stop: async () => {
      await mirror?.close();
    },
  };
}
