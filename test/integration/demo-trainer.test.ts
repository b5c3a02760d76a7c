// Runs the bundled demo trainer (src/demo/nsa_demo_trainer.py) and the simulated nvidia-smi
// (src/demo/nvidia_smi_shim.py) as real python3 processes and checks the files and stdout
// they produce against the real nsa-vibe trainer's contract.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TRAINER = join(ROOT, 'src/demo/nsa_demo_trainer.py');
const SHIM = join(ROOT, 'src/demo/nvidia_smi_shim.py');
const PYTHON = process.env.PYTHON ?? 'python3';

// Regexes from the trainer reference (Appendix A).
const STEP =
  /^(?:\[rank\d+\]:\s*)?step (\d{4,}) \| loss (-?\d+\.\d{4}|nan|-?inf) \| lr (-?\d\.\d{2}e[+-]\d{2}) \| toks\/s (\d+)(?: \| FSDP)?(?: \| grad_norm (-?\d+\.\d{2}|nan|inf))?(?: \| fetch (\d+)ms)?(?: \| fetch_p50 (\d+)ms \| fetch_p95 (\d+)ms)?\s*$/;
const DEBUG_STEP = /^\[debug\] step (\d+): input shape torch\.Size\(\[(\d+), (\d+)\]\), seq_len (\d+)/;
const EFFECTIVE = /^\[boot\] effective config: S=(\d+) B=(\d+) accum=(\d+) gc=(on|off)$/;
const CONFIG_PATH = /^\[boot\] loading config (\S+)/;
const FATAL_NAN = /\[train\]\[FATAL\] non-finite loss detected/;
const HALT_SEEN = /\[train\] HALT file detected/;
const CSV_ROW = /^(\d+),(-?\d+\.\d{6}),(-?\d\.\d{6}e[+-]\d{2}),(\d+)$/;
const HB_LINE =
  /^\{"ts": \d+\.\d+, "iso": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{6})?Z", "pid": \d+, "rank": 0, "step": \d+, "msg": "[a-z_]+", "gpu_mem_alloc": \d+, "gpu_mem_reserved": \d+(?:, "[a-z_]+": .+)?\}$/;
const NVSMI_GPU_LINE =
  /^(\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d\.\d{3}), (\d+), (NVIDIA H200), (\d+), (\d+), (\d+), (\d+), (\d+\.\d{2})$/;
const GPU_QUERY =
  '--query-gpu=timestamp,index,name,memory.used,memory.total,utilization.gpu,temperature.gpu,power.draw';
const CSV_FMT = '--format=csv,noheader,nounits';

const BASE_KEYS = ['ts', 'iso', 'pid', 'rank', 'step', 'msg', 'gpu_mem_alloc', 'gpu_mem_reserved'];
const AUX_KEYS = [
  'gate_entropy_mean',
  'gate_entropy_min',
  'gate_max_gate',
  'gate_collapse_frac',
  'gate_branch_shares',
  'fb_selection_triton_fails',
  'fb_selection_cuda_fails',
  'fb_selection_pack_fails',
  'fb_selection_mask_fails',
  'fb_compressed_fa2_fails',
  'fb_sliding_fa2_fails',
  'fb_total_fallbacks',
  'sel_k_mean',
  'sel_k_max',
  'sel_rows',
  'sel_pct_at_max',
];

interface HeartbeatRecord {
  ts: number;
  iso: string;
  pid: number;
  rank: number;
  step: number;
  msg: string;
  gpu_mem_alloc: number;
  gpu_mem_reserved: number;
  phase?: string;
  loss?: number;
  toks_per_s?: number;
  path?: string;
  [key: string]: unknown;
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Proc {
  child: ChildProcess;
  pid: number;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<Exit>;
  isRunning: () => boolean;
}

const children = new Set<Proc>();
const tempDirs: string[] = [];

afterEach(async () => {
  for (const p of children) {
    if (p.isRunning()) p.child.kill('SIGKILL');
  }
  await Promise.all([...children].map((p) => withTimeout(p.exited, 5000, 'child exit after SIGKILL')));
  children.clear();
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'nsa-demo-'));
  tempDirs.push(d);
  return d;
}

/** Process env without any NSA_* / CONFIG leaking in from the caller. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('NSA_') || k === 'CONFIG' || k === 'WORLD_SIZE' || k === 'RANK' || k === 'LOCAL_RANK') {
      continue;
    }
    env[k] = v;
  }
  env.PYTHONDONTWRITEBYTECODE = '1';
  return { ...env, ...extra };
}

function start(script: string, args: string[], env: Record<string, string> = {}, cwd = ROOT): Proc {
  const child = spawn(PYTHON, [script, ...args], {
    cwd,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  let running = true;
  const exited = new Promise<Exit>((res) => {
    child.on('close', (code, signal) => {
      running = false;
      res({ code, signal });
    });
    child.on('error', () => {
      running = false;
      res({ code: null, signal: null });
    });
  });
  if (child.pid === undefined) throw new Error(`failed to spawn ${PYTHON}`);
  const p: Proc = {
    child,
    pid: child.pid,
    stdout: () => out,
    stderr: () => err,
    exited,
    isRunning: () => running && child.exitCode === null && child.signalCode === null,
  };
  children.add(p);
  return p;
}

function startTrainer(outDir: string, args: string[], env: Record<string, string> = {}): Proc {
  return start(TRAINER, ['--dataset', 'synthetic', '--ddp', '0', '--out-dir', outDir, ...args], env);
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<T>((_, rej) => {
        timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000, proc?: Proc): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (cond()) return;
    if (Date.now() > deadline) {
      const extra = proc ? `\n--- stdout ---\n${proc.stdout()}\n--- stderr ---\n${proc.stderr()}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${extra}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

function readHeartbeat(outDir: string): HeartbeatRecord[] {
  const path = join(outDir, 'heartbeat_rank0.jsonl');
  if (!existsSync(path)) return [];
  const recs: HeartbeatRecord[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      recs.push(JSON.parse(line) as HeartbeatRecord);
    } catch {
      // partial last line while the trainer writes
    }
  }
  return recs;
}

/** Python's '%.2e' formatting (two-digit exponent). */
function pyExp2(x: number): string {
  return x.toExponential(2).replace(/e([+-])(\d)$/, (_m, sign: string, d: string) => `e${sign}0${d}`);
}

function lines(text: string): string[] {
  const ls = text.split('\n');
  if (ls[ls.length - 1] === '') ls.pop();
  return ls;
}

/** utime+stime clock ticks of a live process, from /proc/PID/stat. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function expectBurningCpu(p: Proc, ticks = 15): Promise<void> {
  const t0 = cpuTicks(p.pid);
  await waitFor(() => p.isRunning() && cpuTicks(p.pid) - t0 >= ticks, `${ticks} CPU ticks`, 10_000, p);
  expect(p.isRunning()).toBe(true);
}

function stackdumps(outDir: string, prefix = 'stackdump_'): string[] {
  return readdirSync(outDir)
    .filter((f) => f.startsWith(prefix) && f.endsWith('.txt'))
    .map((f) => join(outDir, f));
}

/** A dump is complete once the watchdog thread's block (always the last one) has its innermost
 * `_watchdog` frame (sleeping, or writing this very dump). */
function completeDumpContaining(outDir: string, needle: string, prefix = 'stackdump_'): string | undefined {
  for (const f of stackdumps(outDir, prefix)) {
    const text = readFileSync(f, 'utf8');
    if (text.includes(needle) && /in _watchdog\n {4}\S.*\n$/.test(text)) return text;
  }
  return undefined;
}

async function waitForDump(
  outDir: string,
  needle: string,
  prefix = 'stackdump_',
  proc?: Proc,
): Promise<string> {
  let dump: string | undefined;
  await waitFor(
    () => {
      dump = completeDumpContaining(outDir, needle, prefix);
      return dump !== undefined;
    },
    `${prefix}*.txt containing "${needle}"`,
    10_000,
    proc,
  );
  return dump!;
}

interface Frame {
  file: string;
  line: number;
  fn: string;
}

function threadFrames(dump: string, thread: string): Frame[] {
  const blocks = dump.split(/^--- Thread: /m).slice(1);
  const block = blocks.find((b) => b.startsWith(`${thread} (`));
  if (!block) throw new Error(`no thread ${thread} in dump:\n${dump}`);
  return [...block.matchAll(/^ {2}File "(.+)", line (\d+), in (\S+)$/gm)].map((m) => ({
    file: m[1]!,
    line: Number(m[2]),
    fn: m[3]!,
  }));
}

function innermostNonHandler(dump: string): Frame {
  const frames = threadFrames(dump, 'MainThread').filter((f) => f.fn !== 'dump_stack');
  return frames[frames.length - 1]!;
}

function shim(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(PYTHON, [SHIM, ...args], {
    cwd: ROOT,
    env: cleanEnv(env),
    encoding: 'utf8',
    timeout: 10_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('demo trainer: passing lane (NSA_PREFILL_BATCHED=1, aux stats off)', () => {
  it('runs N steps with the real stdout, heartbeat, CSV and metrics formats', async () => {
    const out = tempDir();
    const env = { NSA_PREFILL_BATCHED: '1', NSA_DISABLE_AUX_STATS: '1', NSA_HEARTBEAT_EVERY: '1' };
    const p = startTrainer(
      out,
      ['--steps', '8', '--step-ms', '25', '--config', 'ignored.yaml', '--bogus'],
      env,
    );
    const exit = await withTimeout(p.exited, 20_000, 'trainer exit');
    expect(exit, p.stderr()).toEqual({ code: 0, signal: null });

    const ls = lines(p.stdout());
    expect(ls.slice(0, 7)).toEqual([
      '[boot] loading config configs/m7c_small_smoke.yaml',
      '[env-guard] ok',
      '[boot] effective config: S=512 B=1 accum=1 gc=off',
      '[train] dataset=synthetic tokenizer=byte',
      '[train] gradient_checkpointing=off',
      `[train] tensorboard logdir: ${out}/tb`,
      '[trace] overriding steps to 8',
    ]);
    expect(ls[0]).toMatch(CONFIG_PATH);
    expect(ls[2]).toMatch(EFFECTIVE);

    // per-step body: [debug] (steps 1-5) then the step line
    let i = 7;
    const stepLines: RegExpMatchArray[] = [];
    for (let k = 1; k <= 8; k++) {
      if (k <= 5) {
        const d = ls[i++]!.match(DEBUG_STEP);
        expect(d?.slice(1, 5)).toEqual([String(k), '1', '512', '512']);
        expect(ls[i - 1]).toBe(`[debug] step ${k}: input shape torch.Size([1, 512]), seq_len 512`);
      }
      const m = ls[i++]!.match(STEP);
      expect(m, ls[i - 1]).not.toBeNull();
      expect(Number(m![1])).toBe(k);
      expect(m![1]).toHaveLength(4);
      expect(m![3]).toBe(pyExp2((2e-4 * (k + 1)) / 20));
      expect(m![5]).toBeUndefined(); // no grad_norm unless NSA_LOG_GRAD_NORM
      stepLines.push(m!);
    }
    for (const m of stepLines) {
      expect(Number(m[2])).toBeGreaterThan(5.6);
      expect(Number(m[2])).toBeLessThan(5.8);
    }
    expect(Number(stepLines[0]![4])).toBeLessThan(70); // warm-up step
    expect(Math.max(...stepLines.map((m) => Number(m[4])))).toBeLessThanOrEqual(92);

    // metrics JSON, pretty-printed on stdout and in metrics.json
    const rest = ls.slice(i);
    expect(rest[0]).toBe('{');
    expect(rest[rest.length - 1]).toBe('}');
    const printed = JSON.parse(rest.join('\n'));
    const metricsText = readFileSync(join(out, 'metrics.json'), 'utf8');
    expect(metricsText).toBe(rest.join('\n'));
    expect(Object.keys(printed)).toEqual([
      'device',
      'dtype',
      'steps',
      'seq_len',
      'batch_global',
      'lr',
      'loss_first',
      'loss_last',
    ]);
    expect(printed).toMatchObject({ device: 'cuda', dtype: 'torch.bfloat16', steps: 8, seq_len: 512 });
    expect(printed.batch_global).toBe(1);
    expect(printed.lr).toBe(0.0002);

    // heartbeat: exact key order and json.dumps default separators
    const raw = lines(readFileSync(join(out, 'heartbeat_rank0.jsonl'), 'utf8'));
    for (const l of raw) expect(l).toMatch(HB_LINE);
    const hb = readHeartbeat(out);
    expect(hb.map((r) => `${r.msg}:${r.step}`)).toEqual([
      'boot:0',
      ...Array.from({ length: 8 }, (_, j) => [
        `beat:${j + 1}`,
        `progress:${j + 1}`,
        `step_end:${j + 1}`,
      ]).flat(),
    ]);
    for (const r of hb) expect(r.pid).toBe(p.pid);
    expect(Object.keys(hb[0]!)).toEqual([...BASE_KEYS, 'phase']);
    expect(hb[0]).toMatchObject({ phase: 'start', gpu_mem_alloc: 8, gpu_mem_reserved: 18 });
    expect(hb[1]).toMatchObject({ msg: 'beat', phase: 'step_start', gpu_mem_alloc: 8, gpu_mem_reserved: 18 });
    expect(Object.keys(hb[1]!)).toEqual([...BASE_KEYS, 'phase']);
    const progress = hb.filter((r) => r.msg === 'progress');
    expect(Object.keys(progress[0]!)).toEqual([...BASE_KEYS, 'loss', 'toks_per_s']);
    expect(progress[0]).toMatchObject({ gpu_mem_alloc: 92, gpu_mem_reserved: 392 });
    expect(progress[0]!.loss).toBe(5.701375484466553);
    for (const r of progress.slice(1)) {
      expect(r.gpu_mem_reserved).toBeGreaterThanOrEqual(412);
      expect(r.gpu_mem_reserved).toBeLessThan(450);
    }
    const ends = hb.filter((r) => r.msg === 'step_end');
    expect(Object.keys(ends[0]!)).toEqual([...BASE_KEYS, 'phase']);
    expect(ends[0]!.phase).toBe('end');

    // training.csv: no header, step,loss(%.6f),lr(%.6e),toks(%.0f); matches stdout and heartbeat
    const csv = lines(readFileSync(join(out, 'training.csv'), 'utf8'));
    expect(csv).toHaveLength(8);
    csv.forEach((row, j) => {
      const m = row.match(CSV_ROW);
      expect(m, row).not.toBeNull();
      expect(Number(m![1])).toBe(j + 1);
      expect(Math.abs(Number(m![2]) - progress[j]!.loss!)).toBeLessThan(1e-6);
      expect(Number(m![2]).toFixed(4)).toBe(stepLines[j]![2]);
      expect(Number(m![3])).toBeCloseTo((2e-4 * (j + 2)) / 20, 12);
      expect(m![4]).toBe(stepLines[j]![4]);
    });
    expect(printed.loss_first).toBe(progress[0]!.loss);
    expect(printed.loss_last).toBe(progress[7]!.loss);

    // env.json (§2.6)
    const envJson = JSON.parse(readFileSync(join(out, 'env.json'), 'utf8'));
    expect(Object.keys(envJson)).toEqual([
      'time',
      'python',
      'torch',
      'cuda_available',
      'cuda_device_count',
      'env',
      'gpu_name',
      'cuda_capability',
    ]);
    expect(envJson.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$/);
    expect(envJson.env).toEqual(env);
    expect(envJson.gpu_name).toBe('NVIDIA H200 (simulated)');
    expect(envJson.cuda_capability).toEqual([9, 0]);

    // memory dumps are bytes, heartbeat is MiB
    const memBoot = JSON.parse(readFileSync(join(out, 'mem_boot.json'), 'utf8'));
    const memStep1 = JSON.parse(readFileSync(join(out, 'mem_step1.json'), 'utf8'));
    expect(Math.floor(memBoot['reserved_bytes.all.current'] / 2 ** 20)).toBe(18);
    expect(Math.floor(memStep1['reserved_bytes.all.current'] / 2 ** 20)).toBe(392);
    expect(Math.floor(memStep1['allocated_bytes.all.current'] / 2 ** 20)).toBe(92);
    expect(memStep1.num_ooms).toBe(0);
    expect(readFileSync(join(out, 'mem_step1.txt'), 'utf8')).toMatch(/GPU reserved memory/);
    expect(readFileSync(join(out, 'dtypes_report.txt'), 'utf8')).toMatch(
      /^# DTYPE SUMMARY \(elements\)\ntorch\.bfloat16: \d+ \(100\.00%\)\n\nPARAM embed\.weight torch\.bfloat16 torch\.Size\(\[256, 256\]\)\n/,
    );

    expect(existsSync(join(out, 'k_stats.csv'))).toBe(false);
    expect(existsSync(join(out, 'fallback_counters.csv'))).toBe(false);
    expect(existsSync(join(out, '.HALT'))).toBe(false);
    expect(stackdumps(out)).toEqual([]);

    // deterministic values: a second run gives the same losses and lrs
    const out2 = tempDir();
    const p2 = startTrainer(out2, ['--steps', '8', '--step-ms', '25'], env);
    expect((await withTimeout(p2.exited, 20_000, 'second trainer exit')).code).toBe(0);
    const csv2 = lines(readFileSync(join(out2, 'training.csv'), 'utf8'));
    expect(csv2.map((r) => r.split(',').slice(0, 3).join(','))).toEqual(
      csv.map((r) => r.split(',').slice(0, 3).join(',')),
    );
  });

  it('honours the trainer env switches (TB, CSV, SDPA banner, grad_norm, overrides, aux stats)', async () => {
    const out = tempDir();
    const p = startTrainer(out, ['--steps', '2', '--step-ms', '20', '--seq-len', '256'], {
      NSA_PREFILL_BATCHED: 'yes',
      NSA_DISABLE_AUX_STATS: 'TRUE',
      NSA_TB_DISABLE: '1',
      NSA_DISABLE_CSV_LOGS: '1',
      NSA_SDPA_NO_FLASH: '0', // presence, not truthiness, prints the banner
      NSA_LOG_GRAD_NORM: '1',
      NSA_LR: '1e-3',
      NSA_ACCUM: '1',
      CONFIG: 'configs/lane_demo.yaml',
    });
    expect((await withTimeout(p.exited, 20_000, 'trainer exit')).code).toBe(0);
    const ls = lines(p.stdout());
    expect(ls.slice(0, 9)).toEqual([
      '[boot] loading config configs/lane_demo.yaml',
      '[env-guard] ok',
      '[boot] effective config: S=256 B=1 accum=1 gc=off',
      '[train] dataset=synthetic tokenizer=byte',
      '[train] gradient_checkpointing=off',
      '[train] SDPA routing: flash disabled (mem_efficient/math only)',
      '[trace] overriding steps to 2',
      '[train] overriding lr via NSA_LR=0.001',
      '[train] overriding accumulate_grad_batches via NSA_ACCUM=1',
    ]);
    const steps = ls.filter((l) => STEP.test(l));
    expect(steps).toHaveLength(2);
    for (const l of steps) expect(l.match(STEP)![5]).toBe('0.00');
    expect(ls).toContain('[debug] step 1: input shape torch.Size([1, 256]), seq_len 256');
    expect(existsSync(join(out, 'training.csv'))).toBe(false);
    expect(existsSync(join(out, 'tb'))).toBe(false);
    const prog = readHeartbeat(out).filter((r) => r.msg === 'progress');
    expect(Object.keys(prog[0]!)).toEqual([...BASE_KEYS, 'loss', 'toks_per_s', 'grad_norm']);
    expect(readHeartbeat(out).some((r) => r.msg === 'beat')).toBe(false); // NSA_HEARTBEAT_EVERY unset

    // "on" is not truthy for the trainer: TB stays on, aux stats stay on (demo stall switched off here)
    const out2 = tempDir();
    const p2 = startTrainer(out2, ['--steps', '3', '--step-ms', '20'], {
      NSA_PREFILL_BATCHED: '1',
      NSA_DISABLE_AUX_STATS: 'on',
      NSA_TB_DISABLE: 'on',
      NSA_DEMO_AUX_STALL: '0',
    });
    expect((await withTimeout(p2.exited, 20_000, 'trainer exit')).code).toBe(0);
    expect(p2.stdout()).toContain(`[train] tensorboard logdir: ${out2}/tb`);
    const prog2 = readHeartbeat(out2).filter((r) => r.msg === 'progress');
    expect(prog2).toHaveLength(3);
    expect(Object.keys(prog2[0]!)).toEqual([...BASE_KEYS, 'loss', 'toks_per_s', ...AUX_KEYS]);
    expect(prog2[0]).toMatchObject({
      sel_k_mean: 169.0,
      sel_k_max: 256,
      sel_rows: 1024,
      fb_total_fallbacks: 0,
    });
    expect(prog2[0]!.gate_branch_shares).toHaveLength(3);
    expect(readFileSync(join(out2, 'k_stats.csv'), 'utf8')).toBe(
      'step,k_mean,k_max,rows,pct_at_max\n' +
        [1, 2, 3].map((s) => `${s},169.0000,256,1024,0.0176\n`).join(''),
    );
    expect(lines(readFileSync(join(out2, 'fallback_counters.csv'), 'utf8'))).toEqual([
      'step,selection_triton_fails,selection_cuda_fails,selection_pack_fails,selection_mask_fails,compressed_fa2_fails,sliding_fa2_fails,total_fallbacks',
      '1,0,0,0,0,0,0,0',
      '2,0,0,0,0,0,0,0',
      '3,0,0,0,0,0,0,0',
    ]);
  });
});

describe('demo trainer: hangs and signals', () => {
  it('default sequential prefill (aux off) stalls in step 6; SIGUSR1/SIGTERM dump stacks and do not stop it', async () => {
    const out = tempDir();
    const p = startTrainer(out, ['--steps', '20', '--step-ms', '25'], {
      NSA_DISABLE_AUX_STATS: '1',
      NSA_HEARTBEAT_EVERY: '1',
    });
    await waitFor(
      () => readHeartbeat(out).some((r) => r.msg === 'beat' && r.step === 6),
      'step 6 beat heartbeat',
      10_000,
      p,
    );
    await expectBurningCpu(p);

    const ls = lines(p.stdout());
    expect(ls.filter((l) => STEP.test(l)).map((l) => Number(l.match(STEP)![1]))).toEqual([1, 2, 3, 4, 5]);
    expect(ls[ls.length - 1]).toMatch(/^step 0005 \|/);
    expect(p.stdout()).not.toContain('step 0006');
    expect(ls.filter((l) => DEBUG_STEP.test(l))).toHaveLength(5);
    const hb = readHeartbeat(out);
    expect(hb[hb.length - 1]).toMatchObject({
      msg: 'beat',
      step: 6,
      phase: 'step_start',
      gpu_mem_reserved: 412,
    });

    // SIGUSR1: stack dump, innermost frame in the sequential prefill
    p.child.kill('SIGUSR1');
    const dump = await waitForDump(out, 'Signal 10 at');
    expect(dump).toMatch(
      /^Signal 10 at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z\n\n--- Thread: MainThread \(\d+\) ---\n {2}File "/,
    );
    const inner = innermostNonHandler(dump);
    expect(inner.fn).toBe('_forward_prefill_sequential');
    expect(inner.file.endsWith('nsa/core/nsa_attention.py')).toBe(true);
    const main = threadFrames(dump, 'MainThread');
    expect(main[main.length - 1]!.fn).toBe('dump_stack');
    expect(main.some((f) => f.fn === 'main' && f.file.endsWith('scripts/train_showcase.py'))).toBe(true);
    expect(main.some((f) => f.fn === 'forward' && f.file.endsWith('nsa/core/nsa_attention.py'))).toBe(true);
    expect(dump).toMatch(/^--- Thread: Thread-\d+(?: \(_watchdog\))? \(\d+\) ---$/m);
    expect(stackdumps(out)[0]).toMatch(/stackdump_\d{10}\.txt$/);
    expect(p.isRunning()).toBe(true);

    // SIGTERM: the same handler; the process keeps spinning
    p.child.kill('SIGTERM');
    const termDump = await waitForDump(out, 'Signal 15 at');
    expect(innermostNonHandler(termDump).fn).toBe('_forward_prefill_sequential');
    await expectBurningCpu(p, 10);
    expect(p.stdout()).not.toContain('step 0006');
  });

  it.each([
    ['sequential', {}],
    ['batched', { NSA_PREFILL_BATCHED: '1' }],
  ])(
    'aux stats on (%s prefill): step 1 logs progress, then stalls in end-of-step aux work',
    async (_mode, extra) => {
      const out = tempDir();
      const p = startTrainer(out, ['--steps', '10', '--step-ms', '25'], {
        NSA_HEARTBEAT_EVERY: '1',
        ...extra,
      });
      await waitFor(() => readHeartbeat(out).some((r) => r.msg === 'progress'), 'step 1 progress', 10_000, p);
      await expectBurningCpu(p);

      const hb = readHeartbeat(out);
      expect(hb.map((r) => `${r.msg}:${r.step}`)).toEqual(['boot:0', 'beat:1', 'progress:1']);
      expect(Object.keys(hb[2]!)).toEqual([...BASE_KEYS, 'loss', 'toks_per_s', ...AUX_KEYS]);
      expect(p.stdout()).toMatch(/^step 0001 \| loss 5\.7014 \| lr 2\.00e-05 \| toks\/s \d+$/m);
      expect(p.stdout()).not.toContain('[debug] step 2');
      // CSV and aux files: headers exist, no rows yet (the stall precedes step_end and the CSV writes)
      expect(existsSync(join(out, 'training.csv'))).toBe(false);
      expect(readFileSync(join(out, 'k_stats.csv'), 'utf8')).toBe('step,k_mean,k_max,rows,pct_at_max\n');
      expect(readFileSync(join(out, 'fallback_counters.csv'), 'utf8')).toMatch(
        /^step,selection_triton_fails,.*\n$/,
      );

      p.child.kill('SIGUSR1');
      const dump = await waitForDump(out, 'Signal 10 at');
      const inner = innermostNonHandler(dump);
      expect(inner.fn).toBe('_collect_aux_stats');
      expect(inner.file.endsWith('nsa/core/nsa_attention.py')).toBe(true);
    },
  );

  it('in-process watchdog dumps stacks and writes a watchdog_dump heartbeat when heartbeats stop', async () => {
    const out = tempDir();
    const p = startTrainer(out, ['--steps', '10', '--step-ms', '20'], {
      NSA_DEMO_WATCHDOG_S: '0.4',
      NSA_DEMO_WATCHDOG_POLL_S: '0.1',
    });
    const dump = await waitForDump(out, 'Watchdog at', 'watchdog_stackdump_', p);
    expect(dump).toMatch(
      /^Watchdog at \d{4}-\d\d-\d\dT[\d:.]+Z; last_heartbeat=\d+\.\d+\n\n--- Thread: MainThread/,
    );
    const mainFrames = threadFrames(dump, 'MainThread');
    expect(mainFrames[mainFrames.length - 1]!.fn).toBe('_collect_aux_stats');
    await waitFor(() => readHeartbeat(out).some((r) => r.msg === 'watchdog_dump'), 'watchdog_dump heartbeat');
    const wd = readHeartbeat(out).find((r) => r.msg === 'watchdog_dump')!;
    expect(wd.step).toBe(0);
    expect(Object.keys(wd)).toEqual([...BASE_KEYS, 'path']);
    expect(wd.path).toMatch(/watchdog_stackdump_\d+\.txt$/);
    expect(p.isRunning()).toBe(true);
  });
});

describe('demo trainer: crash, NaN and HALT', () => {
  it.each([
    ['batched, --precision fp16', ['--precision', 'fp16'], { NSA_PREFILL_BATCHED: '1' }],
    ['sequential, NSA_DEMO_PRECISION=fp16', [], { NSA_DEMO_PRECISION: 'fp16' }],
  ])('fp16 (%s): non-finite loss at step 2 aborts with exit 0', async (_name, args, extra) => {
    const out = tempDir();
    const p = startTrainer(out, ['--steps', '10', '--step-ms', '20', ...args], {
      NSA_DISABLE_AUX_STATS: '1',
      NSA_HEARTBEAT_EVERY: '1',
      ...extra,
    });
    const exit = await withTimeout(p.exited, 20_000, 'trainer exit');
    expect(exit, p.stderr()).toEqual({ code: 0, signal: null });
    const ls = lines(p.stdout());
    expect(ls).toContain(
      '[amp] GradScaler init_scale=65536.0 growth_interval=2000 growth_factor=2.0 backoff_factor=0.5',
    );
    const fatal = ls.findIndex((l) => FATAL_NAN.test(l));
    expect(ls[fatal]).toBe('[train][FATAL] non-finite loss detected \u2014 aborting run.');
    expect(ls[fatal - 1]).toBe('[debug] step 2: input shape torch.Size([1, 512]), seq_len 512');
    expect(ls[fatal - 2]).toMatch(/^step 0001 \|/);
    expect(ls.filter((l) => STEP.test(l))).toHaveLength(1);
    const metrics = JSON.parse(ls.slice(fatal + 1).join('\n'));
    expect(metrics.dtype).toBe('torch.float16');
    expect(metrics.loss_first).toBe(5.701375484466553);
    expect(metrics.loss_last).toBe(metrics.loss_first);
    expect(JSON.parse(readFileSync(join(out, 'metrics.json'), 'utf8'))).toEqual(metrics);
    expect(readFileSync(join(out, '.HALT'), 'utf8')).toBe('halt: nan_loss\n');
    expect(readFileSync(join(out, '.anomaly_type'), 'utf8')).toBe('nan_loss\n');
    expect(lines(readFileSync(join(out, 'training.csv'), 'utf8'))).toHaveLength(1);
    const hb = readHeartbeat(out);
    expect(hb[hb.length - 1]).toMatchObject({ msg: 'beat', step: 2 });
    expect(hb.filter((r) => r.msg === 'progress').map((r) => r.step)).toEqual([1]);
  });

  it('NSA_USE_FA2=1 crashes in step 1 with a CUDA illegal memory access traceback (exit 1)', async () => {
    const out = tempDir();
    const p = startTrainer(out, ['--steps', '10', '--step-ms', '20'], {
      NSA_USE_FA2: '1',
      NSA_DISABLE_AUX_STATS: '1',
    });
    const exit = await withTimeout(p.exited, 20_000, 'trainer exit');
    expect(exit.code).toBe(1);
    const err = p.stderr();
    expect(err).toContain('Traceback (most recent call last):');
    expect(err).toMatch(/File ".*nsa\/core\/nsa_attention\.py", line \d+, in _forward_prefill_sequential/);
    expect(err).toMatch(
      /File ".*nsa\/core\/attention_kernels\.py", line \d+, in sliding_window_attention_fa2/,
    );
    expect(err).toMatch(/^RuntimeError: CUDA error: an illegal memory access was encountered$/m);
    expect(err).toContain('CUDA kernel errors might be asynchronously reported at some other API call');
    expect(err).toContain('For debugging consider passing CUDA_LAUNCH_BLOCKING=1');
    expect(p.stdout()).toContain('[debug] step 1: input shape torch.Size([1, 512]), seq_len 512');
    expect(p.stdout()).not.toMatch(/^step 0001/m);
    expect(existsSync(join(out, 'metrics.json'))).toBe(false);

    // the batched path crashes the same way
    const out2 = tempDir();
    const p2 = startTrainer(out2, ['--steps', '10', '--step-ms', '20'], {
      NSA_USE_FA2: '1',
      NSA_DISABLE_AUX_STATS: '1',
      NSA_PREFILL_BATCHED: '1',
    });
    expect((await withTimeout(p2.exited, 20_000, 'trainer exit')).code).toBe(1);
    expect(p2.stderr()).toMatch(
      /in _forward_prefill_batched\n[\s\S]*attention_kernels\.py", line \d+, in sliding_window_attention_fa2/,
    );
  });

  it('.HALT stops the run gracefully at the top of the next step, and a stale .HALT stops the next run at step 1', async () => {
    const out = tempDir();
    const env = { NSA_PREFILL_BATCHED: '1', NSA_DISABLE_AUX_STATS: '1' };
    const p = startTrainer(out, ['--steps', '500', '--step-ms', '25'], env);
    await waitFor(() => p.stdout().includes('step 0003 |'), 'step 3', 10_000, p);
    writeFileSync(join(out, '.HALT'), 'halt: manual_stop\n');
    const exit = await withTimeout(p.exited, 10_000, 'trainer exit after .HALT');
    expect(exit).toEqual({ code: 0, signal: null });
    const ls = lines(p.stdout());
    const h = ls.findIndex((l) => HALT_SEEN.test(l));
    expect(ls[h]).toBe('[train] HALT file detected \u2014 stopping gracefully.');
    const lastStep = ls.slice(0, h).filter((l) => STEP.test(l)).length;
    expect(lastStep).toBeGreaterThanOrEqual(3);
    const metrics = JSON.parse(ls.slice(h + 1).join('\n'));
    expect(metrics.steps).toBe(500);
    expect(metrics.loss_last).not.toBeNull();
    expect(readFileSync(join(out, '.HALT'), 'utf8')).toBe('halt: manual_stop\n'); // never deleted
    expect(lines(readFileSync(join(out, 'training.csv'), 'utf8'))).toHaveLength(lastStep);

    const p2 = startTrainer(out, ['--steps', '5', '--step-ms', '25'], env);
    expect((await withTimeout(p2.exited, 10_000, 'stale-HALT run exit')).code).toBe(0);
    const ls2 = lines(p2.stdout());
    const h2 = ls2.findIndex((l) => HALT_SEEN.test(l));
    expect(ls2[h2 - 1]).toBe('[debug] step 1: input shape torch.Size([1, 512]), seq_len 512');
    expect(ls2.some((l) => STEP.test(l))).toBe(false);
    const m2 = JSON.parse(ls2.slice(h2 + 1).join('\n'));
    expect(m2.loss_first).toBeNull();
    expect(m2.loss_last).toBeNull();
    // heartbeat and CSV are appended across runs
    expect(readHeartbeat(out).filter((r) => r.msg === 'boot')).toHaveLength(2);
    expect(lines(readFileSync(join(out, 'training.csv'), 'utf8'))).toHaveLength(lastStep);
  });
});

describe('simulated nvidia-smi', () => {
  it('prints idle CSV lines, -L and the plain table when no trainer is running', () => {
    const out = tempDir();
    const q = shim(['--demo-run-dir', out, GPU_QUERY, CSV_FMT]);
    expect(q.code).toBe(0);
    const ls = lines(q.stdout);
    expect(ls).toHaveLength(1);
    const m = ls[0]!.match(NVSMI_GPU_LINE);
    expect(m, ls[0]).not.toBeNull();
    expect(m!.slice(2, 8)).toEqual(['0', 'NVIDIA H200', '0', '143771', '0', '39']);

    // field order follows the request; header + units without noheader/nounits
    const h = shim(['--query-gpu=memory.used,name,utilization.gpu', '--format=csv'], {
      NSA_DEMO_RUN_DIR: out,
    });
    expect(lines(h.stdout)).toEqual([
      'memory.used [MiB], name, utilization.gpu [%]',
      '0 MiB, NVIDIA H200, 0 %',
    ]);

    expect(
      shim(['--query-compute-apps=pid,process_name,used_memory', CSV_FMT, '--demo-run-dir', out]).stdout,
    ).toBe('');
    expect(shim(['-L']).stdout).toMatch(/^GPU 0: NVIDIA H200 \(simulated\) \(UUID: GPU-[0-9a-f-]+\)\n$/);
    const plain = shim(['--demo-run-dir', out]).stdout;
    expect(plain).toContain('NVIDIA H200');
    expect(plain).toContain('0MiB / 143771MiB');
    expect(plain).toContain('No running processes found');

    const bad = shim(['--query-gpu=memory.used,bogus', CSV_FMT]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toContain('Field "bogus" is not a valid field to query.');
  });

  it("follows the trainer's heartbeat memory while it runs, loops with -lms, and goes idle when it dies", async () => {
    const out = tempDir();
    const t = startTrainer(out, ['--steps', '20', '--step-ms', '25'], {
      NSA_DISABLE_AUX_STATS: '1',
      NSA_HEARTBEAT_EVERY: '1',
    });
    await waitFor(
      () => readHeartbeat(out).some((r) => r.msg === 'beat' && r.step === 6),
      'step 6 beat',
      10_000,
      t,
    );
    const hb = readHeartbeat(out);
    const reserved = hb[hb.length - 1]!.gpu_mem_reserved;
    expect(reserved).toBe(412);

    const q = shim(['--demo-run-dir', out, GPU_QUERY, CSV_FMT]);
    const m = lines(q.stdout)[0]!.match(NVSMI_GPU_LINE);
    expect(m, q.stdout).not.toBeNull();
    expect(Number(m![4])).toBe(reserved + 509);
    expect(Number(m![5])).toBe(143771);
    expect(Number(m![6])).toBeGreaterThanOrEqual(90);
    expect(Number(m![6])).toBeLessThanOrEqual(99);

    const apps = shim(['--query-compute-apps=pid,process_name,used_memory', CSV_FMT], {
      NSA_DEMO_RUN_DIR: out,
    });
    const app = lines(apps.stdout);
    expect(app).toHaveLength(1);
    const am = app[0]!.match(/^(\d+), (\S+), (\d+)$/);
    expect(am, app[0]).not.toBeNull();
    expect(Number(am![1])).toBe(t.pid);
    expect(am![2]).toMatch(/^python/);
    expect(Number(am![3])).toBe(reserved + 500);
    expect(shim(['--demo-run-dir', out]).stdout).toMatch(
      new RegExp(`\\s${t.pid}\\s+C\\s+python\\S*\\s+${reserved + 500}MiB \\|`),
    );

    // loop mode: one line per interval until SIGTERM
    const loop = start(SHIM, ['--demo-run-dir', out, GPU_QUERY, CSV_FMT, '-lms', '100']);
    await waitFor(() => lines(loop.stdout()).length >= 3, '3 polled lines', 10_000, loop);
    loop.child.kill('SIGTERM');
    expect(await withTimeout(loop.exited, 5000, 'shim exit on SIGTERM')).toEqual({ code: 0, signal: null });
    for (const l of lines(loop.stdout())) {
      const lm = l.match(NVSMI_GPU_LINE);
      expect(lm, l).not.toBeNull();
      expect(Number(lm![4])).toBe(reserved + 509);
    }
    expect(loop.stderr()).toBe('');

    // a closed pipe ends the loop quietly
    const piped = start(SHIM, ['--demo-run-dir', out, GPU_QUERY, CSV_FMT, '-lms', '20']);
    await waitFor(() => piped.stdout().length > 0, 'first polled line', 10_000, piped);
    piped.child.stdout!.destroy();
    const pe = await withTimeout(piped.exited, 5000, 'shim exit on closed stdout');
    expect(pe.code === 0 || pe.signal === 'SIGPIPE').toBe(true);
    expect(piped.stderr()).toBe('');

    // trainer gone: memory and utilization drop to 0, no compute apps
    t.child.kill('SIGKILL');
    await withTimeout(t.exited, 5000, 'trainer exit after SIGKILL');
    const dead = lines(shim(['--demo-run-dir', out, GPU_QUERY, CSV_FMT]).stdout)[0]!.match(NVSMI_GPU_LINE);
    expect(dead![4]).toBe('0');
    expect(dead![6]).toBe('0');
    expect(
      shim(['--query-compute-apps=pid,process_name,used_memory', CSV_FMT, '--demo-run-dir', out]).stdout,
    ).toBe('');
  });
});
