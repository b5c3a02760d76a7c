import type { GpuProcess, GpuSample } from '../ingest/events.js';
import { LineSplitter } from '../ingest/line-splitter.js';
import {
  COMPUTE_APPS_ARGS,
  GPU_QUERY_ARGS,
  parseComputeAppsLine,
  parseGpuCsvLine,
} from '../ingest/nvidia-smi.js';
import type { StreamHandle, Target } from '../targets/target.js';

export interface GpuUpdate {
  /** false when nvidia-smi is missing or failing; `message` says why */
  available: boolean;
  message?: string;
  gpus: GpuSample[];
  processes: GpuProcess[];
}

/** before the first sample: what the GPU panel says while nvidia-smi has not answered yet */
export const NO_GPU: GpuUpdate = {
  available: false,
  message: 'waiting for nvidia-smi',
  gpus: [],
  processes: [],
};

/**
 * A run's GPU panel: a started poller whose samples also go into the run's evidence (the report's
 * GPU section), each once however often it is re-sent.
 */
export function pollGpuInto(
  evidence: { addGpuSample(g: GpuSample): void },
  target: Target,
  smi: string[],
  onUpdate: (u: GpuUpdate) => void,
): GpuPoller {
  const seen = new WeakSet<GpuSample>();
  const poller = new GpuPoller(target, smi, (u) => {
    for (const g of u.gpus) {
      if (seen.has(g)) continue;
      seen.add(g);
      evidence.addGpuSample(g);
    }
    onUpdate(u);
  });
  poller.start();
  return poller;
}

/** the process list's gap is at least this many times what the last query took */
const PROC_COST_FACTOR = 20;
/** and at most this long: a process that is gone leaves the list within seconds */
const PROC_MAX_GAP_MS = 5_000;

/**
 * One long-lived `nvidia-smi --query-gpu=… -lms 1000` stream (one process, not one per second)
 * plus a per-process query every few seconds (less often where a query is slow). nvidia-smi can
 * itself hang when the driver is wedged: a stream silent for `staleMs` is reported and restarted.
 * A missing nvidia-smi is reported, not fatal.
 */
export class GpuPoller {
  private stream: StreamHandle | null = null;
  private procTimer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private lastLineAt = 0;
  private stopped = false;
  private latest = new Map<number, GpuSample>();
  private processes: GpuProcess[] = [];
  /** the process list is asked for (not once nvidia-smi is found missing, nor after stop) */
  private procsOn = false;

  constructor(
    private readonly target: Target,
    /** the nvidia-smi program (or the demo shim: ['python3', shim, '--demo-run-dir', dir]) */
    private readonly smi: string[],
    private readonly onUpdate: (u: GpuUpdate) => void,
    private readonly opts: { staleMs?: number; procEveryMs?: number } = {},
  ) {}

  start(): void {
    this.stopped = false;
    this.startStream();
    this.procsOn = true;
    void this.pollProcesses();
    const stale = this.opts.staleMs ?? 10_000;
    this.watchdog = setInterval(() => {
      if (this.stream && Date.now() - this.lastLineAt > stale) {
        this.unavailable(`nvidia-smi silent for ${stale / 1000}s (hung driver?); restarting it`);
        this.stream.kill();
      }
    }, stale / 2);
    this.watchdog.unref?.();
  }

  private snapshot(): GpuUpdate {
    return {
      available: true,
      gpus: [...this.latest.values()].sort((a, b) => a.index - b.index),
      processes: this.processes,
    };
  }

  /** the last samples, with why nvidia-smi gives no more */
  private unavailable(message: string): void {
    this.onUpdate({ ...this.snapshot(), available: false, message });
  }

  private startStream(): void {
    if (this.stopped) return;
    const split = new LineSplitter();
    let stderr = '';
    this.lastLineAt = Date.now();
    const argv = [...this.smi, ...GPU_QUERY_ARGS, '-lms', '1000'];
    const s = this.target.stream(
      argv,
      (chunk) => {
        for (const line of split.push(chunk)) {
          const g = parseGpuCsvLine(line);
          if (!g) continue;
          this.lastLineAt = Date.now();
          this.latest.set(g.index, g);
          this.onUpdate(this.snapshot());
        }
      },
      {
        onStderr: (c) => {
          stderr = (stderr + c.toString('utf8')).slice(-2000);
        },
      },
    );
    this.stream = s;
    void s.done.then((code) => {
      if (this.stream !== s || this.stopped) return;
      this.stream = null;
      const missing = code === 127 || /not found|ENOENT/i.test(stderr);
      this.unavailable(
        missing
          ? `nvidia-smi not found on ${this.target.label} (install the NVIDIA driver utilities)`
          : `nvidia-smi exited with ${code}: ${stderr.trim().split('\n').pop() ?? ''}`.trim(),
      );
      // A missing tool will not appear by itself; anything else is retried. Nor is it worth asking
      // for its processes every few seconds (a fork of this process each time).
      if (!missing) setTimeout(() => this.startStream(), 2000).unref?.();
      else this.stopProcs();
    });
  }

  private async pollProcesses(): Promise<void> {
    const t0 = Date.now();
    // a failed query is reported through the stream's state, not by a second message
    this.processes = (await gpuProcessesOf(this.target, this.smi, 5000)) ?? this.processes;
    if (this.stopped || !this.procsOn) return;
    // each query is a fork of nsa-dbg (or a command over SSH): where one is slow (a loaded box: 370
    // ms of the engine's one thread each, at 512 simulated ranks on 2 cores) it is asked less often,
    // so that the process list takes at most a twentieth of the time
    const every = this.opts.procEveryMs ?? 3000;
    const gap = Math.min(PROC_MAX_GAP_MS, Math.max(every, PROC_COST_FACTOR * (Date.now() - t0)));
    this.procTimer = setTimeout(() => void this.pollProcesses(), gap);
    this.procTimer.unref?.();
  }

  private stopProcs(): void {
    this.procsOn = false;
    if (this.procTimer) clearTimeout(this.procTimer);
  }

  stop(): void {
    this.stopped = true;
    this.stream?.kill();
    this.stream = null;
    this.stopProcs();
    if (this.watchdog) clearInterval(this.watchdog);
  }
}

/** the GPUs' compute processes (`nvidia-smi --query-compute-apps`), or null when it does not answer */
export async function gpuProcessesOf(
  target: Target,
  smi: string[],
  timeoutMs: number,
): Promise<GpuProcess[] | null> {
  const r = await target.exec([...smi, ...COMPUTE_APPS_ARGS], { timeoutMs }).catch(() => null);
  if (r === null || r.code !== 0) return null;
  return r.stdout
    .split('\n')
    .map((l) => parseComputeAppsLine(l))
    .filter((p): p is GpuProcess => p !== null);
}
