/**
 * `nsa-dbg analyze DIR [--log FILE ...] [--json]`: the verdict of a finished (or abandoned) run from
 * the folder it left. Exit status: 0 pass, 1 any other verdict, 2 unusable input.
 */
import type { CommandModule } from 'yargs';
import { analyzeDir, UnusableInputError } from '../../analysis/analyze-dir.js';
import type { AnalysisResult } from '../../analysis/result.js';
import { stepTimeText } from '../../analysis/run-rates.js';
import { signalName } from '../../runs/signals.js';

interface AnalyzeArgs {
  dir: string;
  log?: string[];
  json?: boolean;
}

const fmtFrame = (f: { file: string; line: number; function: string } | null | undefined) =>
  f ? `${f.function} (${f.file}:${f.line})` : '?';

/** The short human report. */
export function formatReport(r: AnalysisResult): string {
  const out: string[] = [];
  out.push(`verdict: ${r.verdict.toUpperCase()} — ${r.summary}`);
  out.push(`steps reached: ${r.stepsReached}   ranks: ${r.ranks.length > 0 ? r.ranks.join(',') : '-'}`);
  if (r.exitCode !== null) out.push(`exit status: ${r.exitCode}${r.killed ? ' (killed)' : ''}`);
  if (r.stall) out.push(`stall: rank ${r.stall.rank}, step ${r.stall.step}, ${r.stall.where}`);
  else if (r.lastPosition && r.verdict !== 'pass') {
    out.push(
      `evidence stops: rank ${r.lastPosition.rank}, step ${r.lastPosition.step}, ${r.lastPosition.where}`,
    );
  }
  if (r.nan) out.push(`nan: rank ${r.nan.rank}, step ${r.nan.step}`);
  if (r.lossExplosion) {
    const e = r.lossExplosion;
    out.push(
      `loss explosion: step ${e.step}, loss ${e.loss.toPrecision(4)} (was ~${e.baseline.toPrecision(4)})`,
    );
  }
  if (r.crash) {
    const c = r.crash;
    out.push(
      `crash: rank ${c.rank}, step ${c.step}: ${c.exception}${c.message ? `: ${c.message.split('\n')[0]}` : ''}`,
    );
    if (c.frame) out.push(`  at ${fmtFrame(c.frame)}`);
  }
  for (const s of r.slowSteps) {
    out.push(
      `slow step: rank ${s.rank}, step ${s.step}: ${s.seconds.toFixed(1)} s (median ${s.medianSeconds.toFixed(1)} s)`,
    );
  }
  for (const p of r.pastStalls) {
    out.push(
      `stall-length gap: rank ${p.rank}, step ${p.step} (${p.where}): ${(p.silenceS ?? 0).toFixed(1)} s > ${(p.thresholdS ?? 0).toFixed(1)} s`,
    );
  }
  if (r.throughput?.medianToksPerS !== undefined) out.push(`median toks/s: ${r.throughput.medianToksPerS}`);
  if (r.throughput?.medianStepS !== undefined)
    out.push(
      `step time: median ${stepTimeText(r.throughput.medianStepS)}, p95 ${stepTimeText(r.throughput.p95StepS!)}`,
    );
  if (r.stepFormat) {
    const f = r.stepFormat;
    out.push(
      `step lines: ${f.name ?? 'none'}, logged every ${f.every}${f.base === 0 ? ', counting from 0' : ''}${f.total ? `, of ${f.total}` : ''}`,
    );
  }
  if (r.memory) out.push(`peak reserved: ${r.memory.peakReservedMiB} MiB`);
  for (const d of r.dumps) {
    const name = d.signal === undefined ? undefined : signalName(d.signal);
    const sig = d.signal === undefined ? '' : `, signal ${d.signal}${name ? ` ${name}` : ''}`;
    const user =
      d.mainThreadUserTop && d.mainThreadUserTop !== d.mainThreadTop
        ? `; your code: ${fmtFrame(d.mainThreadUserTop)}`
        : '';
    out.push(`dump: ${d.file} (${d.kind} dump${sig}) main thread in ${fmtFrame(d.mainThreadTop)}${user}`);
  }
  for (const s of r.signatures) out.push(`signature: ${s.name} ×${s.count} — ${s.meaning}`);
  for (const m of r.missingGrads)
    out.push(`missing grads: rank ${m.rank}${m.step === undefined ? '' : `, step ${m.step}`}: ${m.missing}`);
  for (const n of r.notes) out.push(`note: ${n}`);
  if (r.skippedLines > 0) out.push(`skipped lines: ${r.skippedLines} (malformed records)`);
  return `${out.join('\n')}\n`;
}

export const analyzeCommand: CommandModule<object, AnalyzeArgs> = {
  command: 'analyze <dir>',
  describe: 'give the verdict of a run from its out_dir (heartbeats, dumps, logs)',
  builder: (y) =>
    y
      .positional('dir', { type: 'string', demandOption: true, describe: "the run's out_dir" })
      .option('log', {
        type: 'string',
        array: true,
        describe: 'captured stdout file(s); default DIR/stdout.log',
      })
      .option('json', { type: 'boolean', describe: 'print one JSON object' }) as never,
  handler: async (args) => {
    try {
      const result = await analyzeDir(args.dir, { logs: args.log });
      process.stdout.write(args.json ? `${JSON.stringify(result)}\n` : formatReport(result));
      // slow is a run that finished every step (the checked silences were busy): GO, as `run` says
      process.exitCode = result.verdict === 'pass' || result.verdict === 'slow' ? 0 : 1;
    } catch (err) {
      if (!(err instanceof UnusableInputError)) throw err;
      process.stderr.write(`nsa-dbg analyze: ${err.message}\n`);
      process.exitCode = 2;
    }
  },
};
