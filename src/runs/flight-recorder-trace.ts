/**
 * After a run whose ranks dumped their Flight Recorder (a collective timed out), PyTorch's own
 * analyzer is run on the box where the trainer's torch has it, and what it says is kept beside the
 * dumps as `fr_trace.txt`: nsa-dbg reads the dumps itself for the verdict (which rank missed which
 * collective); torch's report is there to compare with, in its own words.
 */
import { FLIGHT_RECORDER_FILE } from '../ingest/flight-recorder.js';
import type { Target } from '../targets/target.js';
import type { RunSpec } from './launcher.js';

export const FR_TRACE_FILE = 'fr_trace.txt';

export async function traceFlightRecorder(target: Target, spec: RunSpec): Promise<void> {
  const names = await target.listDir(spec.runDir).catch(() => [] as string[]);
  if (!names.some((n) => FLIGHT_RECORDER_FILE.test(n))) return;
  const r = await target
    .exec(
      [
        'sh',
        '-c',
        'cd "$1" && python3 -m torch.distributed.flight_recorder.fr_trace -p nccl_trace_rank_ .',
        'sh',
        spec.runDir,
      ],
      { timeoutMs: 60_000, cwd: spec.cwd },
    )
    .catch(() => null);
  if (r === null || (r.code !== 0 && r.stdout.trim() === '')) return; // this torch has no analyzer
  await target.writeFile(`${spec.runDir}/${FR_TRACE_FILE}`, `${r.stdout}${r.stderr ? `\n${r.stderr}` : ''}`);
}
