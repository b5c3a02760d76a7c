/**
 * What a cell keeps from its run dir: the evidence file list, downsampled loss and toks/s series,
 * the report's excerpts and the platform facts. Read once when the run ends, so the notebook (and
 * a report made from it) stands on its own even after the run dirs are gone.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LineSplitter } from '../ingest/line-splitter.js';
import { mainThread, parseStackDump } from '../ingest/stackdump.js';
import { StdoutParser } from '../ingest/stdout-parser.js';
import { type Excerpts, SERIES_POINTS, type Series } from './model.js';
import { maskText } from './secrets.js';

/** files a person would open; the launcher's own bookkeeping (pid, run.sh) is left out */
const EVIDENCE =
  /^(stdout\.log|heartbeat_rank\d+\.jsonl|env\.json|metrics\.json|.*stackdump_.*\.txt|.*\.pyspy\.txt|faulthandler.*\.txt|mem_.*\.(json|txt)|training\.csv|.*\.csv|dtypes_report\.txt|opt_state_mb\.txt|command\.json|exit_code|nodes\.jsonl|job\.sbatch|nsa-dbg-probes\.jsonl)$/;

export function evidenceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => EVIDENCE.test(f) && statSync(join(dir, f)).isFile())
    .sort();
}

/**
 * Keep at most `max` points, evenly spaced by index, always keeping the first and last (the chart
 * must show where the run started and where it ended).
 */
export function downsample(points: Series, max = SERIES_POINTS): Series {
  if (points.length <= max) return points;
  const out: Series = [];
  for (let i = 0; i < max; i++) out.push(points[Math.round((i * (points.length - 1)) / (max - 1))]!);
  return out;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export interface Scanned {
  loss: Series;
  toks: Series;
  excerpts: Excerpts;
  platform: { gpu?: string; torch?: string; cuda?: string; python?: string };
}

const HANDLER =
  /^(?:dump_stack|_dump(?:_\w+)?|dump_stacks?|_?(?:signal_)?handler|_on_signal|_handle_signal)$/;

/** `env` is the run's unmasked env: secret values that show up in log lines are masked. */
export function scanEvidence(dir: string, env: Record<string, string> = {}): Scanned {
  const lines = new LineSplitter().push(readText(join(dir, 'stdout.log')));
  const parser = new StdoutParser();
  const loss: Series = [];
  const toks: Series = [];
  const stepLines: string[] = [];
  let crash: string[] = [];
  for (const line of lines) {
    for (const e of parser.push(line)) {
      if (e.kind === 'step' && e.rank === 0) {
        loss.push([e.step, e.loss]);
        if (e.toksPerS !== undefined) toks.push([e.step, e.toksPerS]);
        stepLines.push(line);
      }
      if (e.kind === 'traceback' && crash.length === 0) crash = tracebackLines(e);
    }
  }
  for (const e of parser.flush()) if (e.kind === 'traceback' && crash.length === 0) crash = tracebackLines(e);
  const mask = (l: string) => maskText(l, env);
  const steps = stepLines.length > 4 ? [...stepLines.slice(0, 2), '...', ...stepLines.slice(-2)] : stepLines;
  // the output up to the stop: a run stopped after a stall ends with the KeyboardInterrupt of the
  // stop ladder, which says nothing about where it hung; the lines before it do
  const lastStep = stepLines.length ? lines.lastIndexOf(stepLines[stepLines.length - 1]!) : -1;
  const stop = lines.findIndex((l, i) => i > lastStep && /^Traceback \(most recent call last\):/.test(l));
  const untilStop =
    stop >= 0 && /KeyboardInterrupt/.test(lines.slice(stop).join('\n')) ? lines.slice(0, stop) : lines;
  const nonEmpty = untilStop.filter((l) => l.trim() !== '');
  const dumps = evidenceFiles(dir).filter((f) => /stackdump_|pyspy|faulthandler/.test(f));
  const newest = dumps[dumps.length - 1];
  let dumpTop: string[] = [];
  if (newest) {
    const d = parseStackDump(readText(join(dir, newest)), newest);
    const frames = d ? [...(mainThread(d)?.frames ?? [])] : [];
    while (frames.length > 1 && d?.dumpKind === 'signal' && HANDLER.test(frames[frames.length - 1]!.function))
      frames.pop();
    dumpTop = frames
      .slice(-5)
      .reverse()
      .map((f) => `${f.file}:${f.line} in ${f.function}${f.code ? `: ${f.code}` : ''}`);
  }
  return {
    loss: downsample(loss),
    toks: downsample(toks),
    excerpts: {
      steps: steps.map(mask),
      tail: nonEmpty.slice(-6).map(mask),
      dumpTop,
      dumpFile: newest,
      crash: crash.map(mask),
    },
    platform: platformOf(dir),
  };
}

function tracebackLines(e: {
  exception: string;
  message: string;
  frames: Array<{ file: string; line: number; function: string }>;
}): string[] {
  const inner = e.frames.slice(-3).map((f) => `  File "${f.file}", line ${f.line}, in ${f.function}`);
  return [...inner, `${e.exception}: ${e.message.split('\n')[0] ?? ''}`];
}

function platformOf(dir: string): Scanned['platform'] {
  try {
    const env = JSON.parse(readText(join(dir, 'env.json'))) as Record<string, unknown>;
    const torch = typeof env.torch === 'string' ? env.torch : undefined;
    const cuda = torch && /\+cu(\d+)(\d)$/.exec(torch);
    return {
      gpu: typeof env.gpu_name === 'string' ? env.gpu_name : undefined,
      torch,
      cuda: cuda ? `${cuda[1]}.${cuda[2]}` : undefined,
      python: typeof env.python === 'string' ? env.python.split(' ')[0] : undefined,
    };
  } catch {
    return {};
  }
}
