/**
 * The evidence of a `--hosts` run, in the cell's folder on this machine:
 *
 *   hosts/<alias>/…   each host's run dir, mirrored byte for byte as it grows (src/runs/mirror.ts)
 *   stdout.log        every host's output, line by line as it arrived, each line labelled with the
 *                     host's index the way `srun --label` labels a task's (`1: [default0]:…`), so a
 *                     `[defaultN]` is told apart by host and read by the same parser as a Slurm job
 *   nodes.jsonl       the hosts' node records (where each rank runs), merged the same way
 *   exit_code         once every host's agent has ended: the first non-zero status, else 0
 *   probes.jsonl      nsa-dbg's own stack requests and /proc checks (written here directly)
 *
 * The engine reads the merged files at the top (one tail of this folder, as for any run) and the
 * heartbeats and dumps under hosts/ as they are mirrored; `analyze` of the folder reads the same
 * files in the same order, so the live and offline verdicts agree.
 *
 * Picked up again (`attach` after nsa-dbg was killed), the follower first reads what the cell
 * already holds, then each mirror resumes where its copy ends; the lines a host wrote that had not
 * been merged yet (the bytes after the last merged line) are merged then, so the merged output is
 * the same as if nsa-dbg had never stopped.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT_CODE_FILE, exitCodeOf } from '../ingest/launcher-files.js';
import { HOSTS_DIR, isTempFile, MERGED_HOST_FILES, STDOUT_FILE } from '../ingest/run-files.js';
import type { Follower } from '../runs/follower.js';
import { EvidenceMirror, mirroredFiles } from '../runs/mirror.js';
import { RunWatcher } from '../runs/run-watcher.js';
import type { Target } from '../targets/target.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import { debugLog } from '../util/debug-log.js';
import { type HostEntry, mirrorSubdir } from './hosts.js';

export interface FollowedHost {
  entry: HostEntry;
  target: Target;
  /** the host's run dir */
  runDir: string;
}

export class HostsFollower implements Follower {
  private readonly mirrors: EvidenceMirror[] = [];
  private top: RunWatcher | null = null;
  /** per host and merged file: bytes after the last newline */
  private readonly partial = new Map<string, Buffer>();
  private readonly exitCodes = new Map<number, string>();
  private exitWritten = false;

  constructor(
    private readonly local: Target,
    private readonly cellDir: string,
    private readonly hosts: FollowedHost[],
    private readonly onChunk: (name: string, chunk: Buffer) => void,
  ) {}

  async start(): Promise<void> {
    mkdirSync(join(this.cellDir, HOSTS_DIR), { recursive: true });
    for (let i = 0; i < this.hosts.length; i++) this.resume(i);
    this.top = new RunWatcher(this.local, this.cellDir, this.onChunk);
    this.top.start();
    await Promise.all(
      this.hosts.map((h, i) => {
        const sub = mirrorSubdir(h.entry);
        const m = new EvidenceMirror(h.target, h.runDir, join(this.cellDir, sub), {
          onChunk: (name, chunk) => this.fromHost(i, name, chunk),
          onError: (e) => debugLog(`mirror of ${h.entry.alias}: ${e.message}`),
        });
        this.mirrors.push(m);
        return m.start();
      }),
    );
  }

  /**
   * What the cell already holds of host `i` (an earlier nsa-dbg mirrored it): read first, in the
   * order the mirror would have delivered it, and its lines not merged yet merged now.
   */
  private resume(i: number): void {
    const sub = mirrorSubdir(this.hosts[i]!.entry);
    for (const [name, data] of mirroredFiles(join(this.cellDir, sub), isTempFile)) {
      if (MERGED_HOST_FILES.includes(name)) this.mergeRest(i, name, data);
      else if (name === EXIT_CODE_FILE) this.noteExit(i, data);
      this.onChunk(`${sub}/${name}`, data);
    }
  }

  /** the lines of host `i`'s file the merged file lacks, merged; the bytes after them kept as its partial */
  private mergeRest(i: number, name: string, data: Buffer): void {
    const whole = this.wholeLines(i, name, data);
    if (!whole) return;
    const lines = whole.toString('utf8').split('\n').slice(0, -1);
    const top = join(this.cellDir, name);
    const merged = existsSync(top) ? readFileSync(top, 'utf8').split('\n') : [];
    let rest: string[];
    if (name === STDOUT_FILE) {
      // every merged output line carries its host's label: those of this host are its first lines
      const label = `${i}: `;
      const n = merged.filter((l) => l.startsWith(label)).length;
      rest = lines.slice(n);
    } else {
      // node records are unique (each names its pid): the ones not at the top yet
      const have = new Set(merged);
      rest = lines.filter((l) => !have.has(l));
    }
    if (rest.length) this.appendLines(i, name, Buffer.from(`${rest.join('\n')}\n`));
  }

  private fromHost(i: number, name: string, chunk: Buffer): void {
    if (MERGED_HOST_FILES.includes(name)) this.merge(i, name, chunk);
    else if (name === EXIT_CODE_FILE) this.noteExit(i, chunk);
    this.onChunk(`${mirrorSubdir(this.hosts[i]!.entry)}/${name}`, chunk);
  }

  /** append the complete lines of a host's chunk to the merged file, labelled with the host */
  private merge(i: number, name: string, chunk: Buffer): void {
    const data = Buffer.concat([this.partial.get(`${i}/${name}`) ?? Buffer.alloc(0), chunk]);
    const whole = this.wholeLines(i, name, data);
    if (whole) this.appendLines(i, name, whole);
  }

  /** `data`'s complete lines (null: none); the bytes after the last newline kept as its partial */
  private wholeLines(i: number, name: string, data: Buffer): Buffer | null {
    const end = data.lastIndexOf(10);
    this.partial.set(`${i}/${name}`, data.subarray(end + 1));
    return end < 0 ? null : data.subarray(0, end + 1);
  }

  private appendLines(i: number, name: string, lines: Buffer): void {
    const parts: Buffer[] = [];
    const label = Buffer.from(name === 'stdout.log' ? `${i}: ` : '');
    let start = 0;
    while (start < lines.length) {
      const nl = lines.indexOf(10, start);
      const stop = nl < 0 ? lines.length : nl + 1;
      parts.push(label, lines.subarray(start, stop));
      start = stop;
    }
    if (lines[lines.length - 1] !== 10) parts.push(Buffer.from('\n'));
    appendFileSync(join(this.cellDir, name), Buffer.concat(parts));
  }

  private noteExit(i: number, chunk: Buffer): void {
    this.exitCodes.set(i, (this.exitCodes.get(i) ?? '') + chunk.toString('utf8'));
    this.writeExitWhenAllEnded();
  }

  /** the run has ended once every host's agent has: its status is the first failure, else 0 */
  private writeExitWhenAllEnded(): void {
    if (this.exitWritten) return;
    const codes: number[] = [];
    for (let i = 0; i < this.hosts.length; i++) {
      const text = this.exitCodes.get(i);
      if (text === undefined || !text.endsWith('\n')) return;
      codes.push(exitCodeOf(text) ?? 1);
    }
    this.exitWritten = true;
    writeFileAtomic(join(this.cellDir, EXIT_CODE_FILE), `${codes.find((c) => c !== 0) ?? 0}\n`, {
      durable: false,
    });
  }

  /** every host's files caught up and their last partial lines merged, then the top drained */
  async stop(): Promise<void> {
    await Promise.all(this.mirrors.map((m) => m.close().catch((e) => debugLog(`mirror close: ${e}`))));
    // a run left going (quit, to be picked up again) keeps its hosts' unfinished lines unmerged:
    // the next follower merges them once they are whole
    if (this.exitWritten) this.mergePartials();
    this.partial.clear();
    await this.top?.stop();
  }

  /** every agent has ended: their last lines, whole or not, go to the merged files */
  private mergePartials(): void {
    for (const [key, rest] of this.partial) {
      if (rest.length === 0) continue;
      const [i, name] = [Number(key.slice(0, key.indexOf('/'))), key.slice(key.indexOf('/') + 1)];
      this.appendLines(i, name, rest);
    }
  }
}
