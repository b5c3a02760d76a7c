/**
 * Offline analysis of a run's out_dir: every artifact the trainer (and our launcher) leaves, read
 * through the same parsers and Evidence the live session uses.
 *
 * Files read (by name):
 *   heartbeat_rank{R}.jsonl, heartbeat.jsonl     streamed through HeartbeatReader
 *   stackdump_*.txt, watchdog_stackdump*.txt, *.pyspy.txt, pyspy*.txt, faulthandler*.txt, *.faulthandler.txt
 *   nvsmi*.csv, nvidia-smi*.csv                  both query kinds, told apart by shape
 *   mem_*.json, env.json, training.csv, metrics.json, .HALT, .anomaly_type, exit_code
 *   stdout.log (or the `logs` given)             streamed through LineSplitter + StdoutParser
 * Heartbeats go first so that timestamps exist before the stdout lines refer to steps.
 */

import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { HOST_FILES_READ_AT_TOP, HOSTS_DIR } from '../hosts/hosts.js';
import { HeartbeatReader } from '../ingest/heartbeat.js';
import { LineSplitter } from '../ingest/line-splitter.js';
import { parseNvidiaSmiLine } from '../ingest/nvidia-smi.js';
import { PROBES_FILE, parseProbeLine } from '../ingest/probes.js';
import { DUMP_FILE, parseStackDump } from '../ingest/stackdump.js';
import { StdoutParser } from '../ingest/stdout-parser.js';
import { evidenceOptionsOf } from '../presets/preset.js';
import type { RunSpec } from '../runs/launcher.js';
import { NODES_FILE } from '../slurm/node-map.js';
import { Evidence, type EvidenceOptions } from './evidence.js';
import type { AnalysisResult } from './result.js';

/** The input cannot be analysed at all (missing folder, nothing recognisable in it). */
export class UnusableInputError extends Error {
  override name = 'UnusableInputError';
}

export const READ_CHUNK = 1 << 20;

const HEARTBEAT = /^heartbeat(?:_rank(\d+))?\.jsonl$/;
const NVSMI = /^(?:nvsmi|nvidia-smi).*\.csv$/;
const WHOLE =
  /^(?:mem_.*\.json|env\.json|training(?:_fsdp)?\.csv|metrics(?:_fsdp)?\.json|\.HALT|\.anomaly_type|exit_code)$/;
/** Small files are read whole; a dump or control file bigger than this is not what we think it is. */
const MAX_WHOLE_FILE = 64 * 1024 * 1024;

export interface AnalyzeOptions {
  /** captured stdout files; default: DIR/stdout.log when present */
  logs?: string[];
  /** a preset's step regex for unknown trainers (default: the one in the run's command.json) */
  stepRegex?: RegExp;
  /** detector settings (default: the lane's, from the run's command.json) */
  evidence?: EvidenceOptions;
}

/** What nsa-dbg recorded about how this run is judged: the lane's detector settings and step regex. */
interface RunSettings {
  evidence?: EvidenceOptions;
  stepRegex?: RegExp;
  /** a Slurm run: stdout.log has srun's task labels */
  srun?: boolean;
}

async function runSettings(dir: string): Promise<RunSettings> {
  const text = await readFile(join(dir, 'command.json'), 'utf8').catch(() => null);
  if (text === null) return {};
  try {
    const spec = JSON.parse(text) as Partial<RunSpec>;
    const out: RunSettings = {};
    if (spec.detector && typeof spec.detector === 'object') out.evidence = evidenceOptionsOf(spec.detector);
    if (typeof spec.stepRegex === 'string') out.stepRegex = new RegExp(spec.stepRegex);
    if (spec.launcher?.slurm || spec.launcher?.hosts) {
      out.srun = true;
      out.evidence = { ...out.evidence, nprocPerNode: spec.launcher.nprocPerNode };
    }
    return out;
  } catch {
    return {}; // a damaged command.json: judge with the defaults
  }
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function streamFile(path: string, onChunk: (chunk: Buffer) => void): Promise<void> {
  // 1 MiB reads, like the live file followers: per-chunk costs (allocation, decoding) stay small
  const stream = createReadStream(path, { highWaterMark: READ_CHUNK });
  for await (const chunk of stream) onChunk(chunk as Buffer);
}

/**
 * A `--hosts` cell's mirrors of each host's run dir (`hosts/<alias>/…`): their heartbeats, dumps and
 * artifacts, named by their path in the cell as the live session names them.
 */
async function hostFiles(dir: string): Promise<string[]> {
  const root = join(dir, HOSTS_DIR);
  if (!(await isDir(root))) return [];
  const out: string[] = [];
  for (const host of (await readdir(root)).sort()) {
    if (!(await isDir(join(root, host)))) continue;
    for (const name of (await readdir(join(root, host))).sort())
      if (!HOST_FILES_READ_AT_TOP.has(name)) out.push(`${HOSTS_DIR}/${host}/${name}`);
  }
  return out;
}

export async function analyzeDir(dir: string, opts: AnalyzeOptions = {}): Promise<AnalysisResult> {
  if (!(await isDir(dir))) throw new UnusableInputError(`not a directory: ${dir}`);
  const top = (await readdir(dir)).sort();
  const names = [...top, ...(await hostFiles(dir))];
  const recorded = await runSettings(dir);
  const evidence = new Evidence(opts.evidence ?? recorded.evidence);
  const stepRegex = opts.stepRegex ?? recorded.stepRegex;
  let recognised = 0;

  for (const name of names) {
    const m = HEARTBEAT.exec(basename(name));
    if (m === null) continue;
    recognised++;
    const reader = new HeartbeatReader({ rank: m[1] === undefined ? 0 : Number(m[1]) });
    await streamFile(join(dir, name), (chunk) => {
      for (const b of reader.push(chunk)) evidence.addEvent(b);
    });
    for (const b of reader.flush()) evidence.addEvent(b);
    evidence.addSkipped(reader.skippedLines);
  }

  for (const name of names) {
    const path = join(dir, name);
    const base = basename(name);
    if (DUMP_FILE.test(base) || NVSMI.test(base) || WHOLE.test(base)) {
      const info = await stat(path).catch(() => null);
      if (info === null || !info.isFile() || info.size > MAX_WHOLE_FILE) continue;
      recognised++;
      const text = await readFile(path, 'utf8');
      if (DUMP_FILE.test(base)) {
        const d = parseStackDump(text, name);
        if (d !== null) evidence.addEvent(d);
      } else if (NVSMI.test(base)) {
        for (const line of text.split('\n')) {
          const rec = parseNvidiaSmiLine(line);
          if (rec !== null && 'index' in rec) evidence.addGpuSample(rec);
        }
      } else evidence.noteFile(name, text);
    }
  }

  if (names.includes(PROBES_FILE)) {
    recognised++;
    const splitter = new LineSplitter();
    const onLine = (line: string) => {
      if (line.trim() === '') return;
      const e = parseProbeLine(line);
      if (e === null) evidence.addSkipped(1);
      else evidence.addEvent(e);
    };
    await streamFile(join(dir, PROBES_FILE), (chunk) => {
      for (const line of splitter.push(chunk)) onLine(line);
    });
    for (const line of splitter.flush()) onLine(line);
  }

  // where each rank runs, before the output whose `[defaultN]:` it resolves
  if (names.includes(NODES_FILE)) {
    recognised++;
    await streamFile(join(dir, NODES_FILE), (chunk) => evidence.nodes.push(chunk.toString('utf8')));
    evidence.nodes.push('\n');
  }

  const logs = opts.logs ?? (names.includes('stdout.log') ? [join(dir, 'stdout.log')] : []);
  for (const log of logs) {
    const info = await stat(log).catch(() => null);
    if (info === null || !info.isFile()) throw new UnusableInputError(`log file not found: ${log}`);
    recognised++;
    const splitter = new LineSplitter();
    const parser = new StdoutParser({
      stepRegex,
      ...(recorded.srun ? { srunTasks: evidence.nodes } : {}),
    });
    await streamFile(log, (chunk) => {
      for (const line of splitter.push(chunk)) for (const e of parser.push(line)) evidence.addEvent(e);
    });
    for (const line of splitter.flush()) for (const e of parser.push(line)) evidence.addEvent(e);
    for (const e of parser.flush()) evidence.addEvent(e);
    evidence.addSkipped(parser.skippedLines);
  }

  if (recognised === 0) {
    throw new UnusableInputError(
      `no run evidence in ${dir} (no heartbeat_rank*.jsonl, stdout.log, dumps or run files)`,
    );
  }
  return evidence.result();
}

/** For messages: the folder's own name. */
export function runName(dir: string): string {
  return basename(dir.replace(/\/+$/, ''));
}
