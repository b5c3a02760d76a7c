/**
 * Offline analysis of a run folder: its files, read one after the other through the same
 * run-folder reader and Evidence that the live session feeds chunk by chunk (src/ingest/
 * run-folder.ts says which file is what). The order files are read in does not change the verdict;
 * node records go first so that labelled output is placed at once.
 */

import { createReadStream, readdirSync, statSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Evidence, type EvidenceOptions } from '../analysis/evidence.js';
import type { AnalysisResult } from '../analysis/result.js';
import { DigestCollector } from '../analysis/run-digest.js';
import { COMMAND_FILE, LAUNCH_FILE } from '../ingest/launcher-files.js';
import { type ReaderView, views } from '../ingest/reader-view.js';
import { CLOCK_FILE, classifyRunPath, NODES_FILE, type RunLayout } from '../ingest/run-files.js';
import { RunFolderReader } from '../ingest/run-folder.js';
import { evidenceOptionsOf } from '../lanes/lane.js';
import { parseRunSpec } from './spec-file.js';

/** The input cannot be analysed at all (missing folder, nothing recognisable in it). */
export class UnusableInputError extends Error {
  override name = 'UnusableInputError';
}

export const READ_CHUNK = 1 << 20;

export interface AnalyzeOptions {
  /** captured stdout files; default: DIR/stdout.log when present */
  logs?: string[];
  /** a lane's step regex for unknown trainers (default: the one in the run's command.json) */
  stepRegex?: RegExp;
  /** detector settings (default: the lane's, from the run's command.json) */
  evidence?: EvidenceOptions;
  /** something else that wants the lines, events and dumps as they are read */
  view?: ReaderView;
}

/** How nsa-dbg recorded that this run is judged and laid out (its command.json). */
export interface RunSettings {
  evidence?: EvidenceOptions;
  stepRegex?: RegExp;
  layout: RunLayout;
}

export async function runSettings(dir: string): Promise<RunSettings> {
  const text = await readFile(join(dir, COMMAND_FILE), 'utf8').catch(() => null);
  if (text === null) return { layout: {} };
  try {
    const launch = await readFile(join(dir, LAUNCH_FILE), 'utf8')
      .then((t) => JSON.parse(t) as unknown)
      .catch(() => undefined);
    const spec = parseRunSpec(text, launch);
    const layout = spec.layout ?? {};
    const out: RunSettings = { layout };
    if (spec.detector && typeof spec.detector === 'object') out.evidence = evidenceOptionsOf(spec.detector);
    if (typeof spec.stepRegex === 'string') out.stepRegex = new RegExp(spec.stepRegex);
    if (layout.nprocPerNode !== undefined)
      out.evidence = { ...out.evidence, nprocPerNode: layout.nprocPerNode };
    return out;
  } catch {
    return { layout: {} }; // a damaged command.json: judge with the defaults
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** the subfolders a layout adds to the run folder (`hosts/<alias>`, `out`), relative */
export function layoutDirs(dir: string, layout: RunLayout): string[] {
  const out: string[] = [];
  if (layout.outCopy !== undefined && isDir(join(dir, layout.outCopy))) out.push(layout.outCopy);
  if (layout.hostsDir !== undefined && isDir(join(dir, layout.hostsDir)))
    for (const h of readdirSync(join(dir, layout.hostsDir)).sort())
      if (isDir(join(dir, layout.hostsDir, h))) out.push(`${layout.hostsDir}/${h}`);
  return out;
}

async function streamFile(path: string, onChunk: (chunk: Buffer) => void): Promise<void> {
  // 1 MiB reads, like the live file followers: per-chunk costs (allocation, decoding) stay small
  const stream = createReadStream(path, { highWaterMark: READ_CHUNK });
  for await (const chunk of stream) onChunk(chunk as Buffer);
}

/** the folder's files the reader takes, by path in the folder: node records first, the output last */
async function folderFiles(dir: string, layout: RunLayout, withOutput: boolean): Promise<string[]> {
  const paths = (await readdir(dir)).sort();
  for (const sub of layoutDirs(dir, layout))
    for (const name of (await readdir(join(dir, sub))).sort()) paths.push(`${sub}/${name}`);
  const rank = (p: string) =>
    p === NODES_FILE || p === CLOCK_FILE ? 0 : classifyRunPath(p, layout) === 'stdout' ? 2 : 1;
  const taken = (kind: ReturnType<typeof classifyRunPath>) =>
    kind !== null && (withOutput || kind !== 'stdout');
  return paths
    .filter((p) => taken(classifyRunPath(p, layout)))
    .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

export async function analyzeDir(dir: string, opts: AnalyzeOptions = {}): Promise<AnalysisResult> {
  if (!isDir(dir)) throw new UnusableInputError(`not a directory: ${dir}`);
  const recorded = await runSettings(dir);
  const evidence = new Evidence(opts.evidence ?? recorded.evidence);
  const files = await folderFiles(dir, recorded.layout, opts.logs === undefined);
  const digest = new DigestCollector();
  const reader = new RunFolderReader(evidence, {
    layout: recorded.layout,
    // lines wait for the arrival times nsa-dbg recorded, when it did
    timed: files.includes(CLOCK_FILE),
    stepRegex: opts.stepRegex ?? recorded.stepRegex,
    view: opts.view ? views(digest, opts.view) : digest,
  });
  for (const path of files) {
    const info = await stat(join(dir, path)).catch(() => null);
    if (info === null || !info.isFile()) continue;
    await streamFile(join(dir, path), (chunk) => reader.push(path, chunk));
  }
  let logs = 0;
  for (const log of opts.logs ?? []) {
    const info = await stat(log).catch(() => null);
    if (info === null || !info.isFile()) throw new UnusableInputError(`log file not found: ${log}`);
    const path = `log:${logs++}:${basename(log)}`;
    await streamFile(log, (chunk) => reader.push(path, chunk, 'stdout'));
  }
  reader.end();
  if (files.length + logs === 0) {
    throw new UnusableInputError(
      `no run evidence in ${dir} (no heartbeat_rank*.jsonl, stdout.log, dumps or run files)`,
    );
  }
  const r = evidence.result();
  return { ...r, digest: digest.digest(r) };
}
