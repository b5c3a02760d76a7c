/**
 * `nsa-dbg analyze DIR [--log FILE ...] [--json]`: the verdict of a finished (or abandoned) run from
 * the folder it left. Exit status: 0 pass, 1 any other verdict, 2 unusable input.
 */
import type { CommandModule } from 'yargs';
import type { AnalysisResult } from '../../analysis/result.js';
import { stepTimeText } from '../../analysis/run-rates.js';
import {
  type DumpGroup,
  groupDumps,
  moreText,
  slowGroupText,
  slowStepText,
  summariseSlowSteps,
} from '../../analysis/slow-groups.js';
import { stragglerText } from '../../analysis/straggler.js';
import { analyzeDir, UnusableInputError } from '../../runs/analyze-dir.js';
import { signalName } from '../../runs/signals.js';
import { rateText } from '../../util/rate.js';

interface AnalyzeArgs {
  dir: string;
  log?: string[];
  json?: boolean;
}

/** slow steps spelled out, the longest first; the rest are counted */
const MAX_SLOW = 10;

const fmtFrame = (f: { file: string; line: number; function: string } | null | undefined) =>
  f ? `${f.function} (${f.file}:${f.line})` : '?';

/** "faulthandler dump" / "signal dump, signal 10 SIGUSR1", with a count when there are several */
function kindText(k: { kind: string; signal?: number; count: number }, counted: boolean): string {
  const name = k.signal === undefined ? undefined : signalName(k.signal);
  const sig = k.signal === undefined ? '' : `, signal ${k.signal}${name ? ` ${name}` : ''}`;
  return counted ? `${k.count} ${k.kind} dump${k.count === 1 ? '' : 's'}${sig}` : `${k.kind} dump${sig}`;
}

/** "dump: FILE (signal dump, …)", or "dumps ×16: FIRST … LAST (8 faulthandler dumps, 8 signal dumps, …)" */
function dumpHead(g: DumpGroup): string {
  const how = g.kinds.map((k) => kindText(k, g.count > 1)).join('; ');
  return g.count === 1
    ? `dump: ${g.first.file} (${how})`
    : `dumps ×${g.count}: ${g.first.file} … ${g.last.file} (${how})`;
}

/**
 * The short human report: the verdict, then what stands out (the stall, the crash, the slow step
 * that is no routine), then the run's numbers, then the routine (periodic slow steps as one line,
 * identical dumps as one line with a count), so the finding is never buried.
 */
export function formatReport(r: AnalysisResult): string {
  const out: string[] = [];
  out.push(`verdict: ${r.verdict.toUpperCase()} — ${r.summary}`);
  if (r.stall) out.push(`stall: rank ${r.stall.rank}, step ${r.stall.step}, ${r.stall.where}`);
  // a run that finished (pass, slow) stopped nowhere: where its evidence ends says nothing
  else if (r.lastPosition && r.verdict !== 'pass' && r.verdict !== 'slow') {
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
  const slow = summariseSlowSteps(r.slowSteps, r.digest?.excerpts.causes);
  for (const s of slow.findings.slice(0, MAX_SLOW)) out.push(`slow step: ${slowStepText(s)}`);
  if (slow.findings.length > MAX_SLOW) out.push(`slow steps: ${moreText(slow.findings.slice(MAX_SLOW))}`);
  for (const p of r.pastStalls) {
    out.push(
      `stall-length gap: rank ${p.rank}, step ${p.step} (${p.where}): ${(p.silenceS ?? 0).toFixed(1)} s > ${(p.thresholdS ?? 0).toFixed(1)} s`,
    );
  }
  out.push(`steps reached: ${r.stepsReached}   ranks: ${r.ranks.length > 0 ? r.ranks.join(',') : '-'}`);
  if (r.exitCode !== null) out.push(`exit status: ${r.exitCode}${r.killed ? ' (killed)' : ''}`);
  if (r.throughput?.medianToksPerS !== undefined)
    out.push(`median toks/s: ${rateText(r.throughput.medianToksPerS)}`);
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
  // which rank the others wait for, from stack samples taken while it trained (straggler.ts)
  const straggler = stragglerText(r.stragglers ?? []);
  if (straggler !== null) out.push(straggler);
  for (const g of slow.groups) out.push(`slow steps: ${slowGroupText(g)}`);
  for (const g of groupDumps(r.dumps)) {
    const d = g.first;
    const user =
      d.mainThreadUserTop && d.mainThreadUserTop !== d.mainThreadTop
        ? `; your code: ${fmtFrame(d.mainThreadUserTop)}`
        : '';
    out.push(`${dumpHead(g)} main thread in ${fmtFrame(d.mainThreadTop)}${user}`);
  }
  // where each rank was when a signal ended it (the stack hook's last words), one line per rank
  for (const w of r.lastWords ?? [])
    out.push(
      `last words: rank ${w.rank} (pid ${w.pid}), ${w.signal}${w.at === null ? '' : ` at ${new Date(w.at * 1000).toISOString()}`}: ${w.waiting ? 'waiting in ' : ''}${w.mainThreadTop ? fmtFrame(w.mainThreadTop) : 'native code'}`,
    );
  if (r.teardown)
    out.push(
      `teardown snapshot (${r.teardown.trigger}): ${r.teardown.ranks.map((t) => `rank ${t.rank} ${t.state ?? 'gone'}${t.wchan ? ` ${t.wchan}` : ''}${t.cpuPct === null ? '' : ` ${Math.round(t.cpuPct)}%`}`).join(', ')}`,
    );
  for (const k of r.oomKills ?? [])
    out.push(
      `OOM kill: rank ${k.rank} (pid ${k.pid}, ${k.process})${k.anonRssKiB ? `, anon-rss ${k.anonRssKiB} kB` : ''}`,
    );
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
