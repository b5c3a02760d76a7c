/**
 * A real one-box Slurm cluster for integration tests: munged, slurmctld and slurmd (Debian's
 * slurm-wlm 22.05 + munge) running as children of the test process, with every key, socket, port,
 * spool, state and log file in a temp dir, so nothing touches /etc/slurm, /etc/munge or the
 * system munge socket. Must run as root (SlurmUser=root; slurmd needs root to start job steps).
 *
 * Pass `cluster.env` to every slurm command and to anything that calls one (it carries SLURM_CONF;
 * the conf's AuthInfo points clients at our munge socket).
 */

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { waitUntil } from './wait.js';

const BINARIES = [
  '/usr/sbin/munged',
  '/usr/sbin/slurmctld',
  '/usr/sbin/slurmd',
  '/usr/sbin/slurmstepd',
  '/usr/bin/srun',
  '/usr/bin/sbatch',
  '/usr/bin/squeue',
  '/usr/bin/scontrol',
  '/usr/bin/scancel',
  '/usr/bin/sinfo',
];

export interface SlurmCluster {
  dir: string;
  /** SLURM_CONF (and nothing else): merge into the env of any slurm command or child process */
  env: Record<string, string>;
  /** the one node's name (the short hostname), for `-w` / `--nodelist` */
  nodeName: string;
  /**
   * sbatch/srun arguments that keep a job PENDING forever with a readable reason: the `down`
   * partition has State=DOWN, so slurmctld accepts the job and squeue's %r says `PartitionDown`.
   */
  pendingArgs: string[];
  /** run a slurm client command against this cluster; never throws on a non-zero exit */
  run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** cancel all jobs, stop the daemons, kill anything left of our jobs, remove the dir */
  stop(): Promise<void>;
}

/**
 * Every process whose environment carries our SLURM_CONF: the daemons, the slurmstepds (they
 * inherit slurmd's env) and the job processes (sbatch/srun export the submitter's env). The conf
 * path lives in a fresh temp dir, so this cannot match anything that is not ours.
 */
function pidsUsingConf(confPath: string): number[] {
  const needle = Buffer.from(`\0SLURM_CONF=${confPath}\0`);
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const env = Buffer.concat([Buffer.from('\0'), readFileSync(`/proc/${entry}/environ`)]);
      if (env.includes(needle)) pids.push(Number(entry));
    } catch {
      // exited meanwhile, or a kernel thread
    }
  }
  return pids;
}

export async function startSlurmCluster(): Promise<SlurmCluster> {
  const missing = BINARIES.filter((b) => !existsSync(b));
  if (missing.length > 0) {
    throw new Error(
      `Slurm/munge not installed (missing ${missing.join(', ')}): apt-get install -y slurm-wlm munge`,
    );
  }
  if (process.getuid?.() !== 0) throw new Error('startSlurmCluster needs root (SlurmUser=root, slurmd)');

  const dir = mkdtempSync(join(tmpdir(), 'nsa-dbg-slurm-'));
  // munged refuses a socket whose directory is not executable by all ("Socket is inaccessible")
  chmodSync(dir, 0o755);
  for (const sub of ['state', 'spool']) mkdirSync(join(dir, sub));
  const confPath = join(dir, 'slurm.conf');
  const mungeSocket = join(dir, 'munge.sock');
  const nodeName = hostname().split('.')[0]!;
  // declare at least 4 CPUs (config_overrides lets slurmd accept more than the box has) so a
  // 2-task job, a sleeping job and a pending one fit at once on a 2-core CI runner
  const cpus = Math.max(4, availableParallelism());
  const [ctldPort, slurmdPort] = [await freePort(), await freePort()];
  // an inherited SLURM_* (a CI job itself running under Slurm) must not leak into our daemons
  const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SLURM_')));
  const env = { SLURM_CONF: confPath };
  const childEnv = { ...baseEnv, ...env } as NodeJS.ProcessEnv;

  writeFileSync(join(dir, 'munge.key'), randomBytes(1024), { mode: 0o400 });
  writeFileSync(join(dir, 'plugstack.conf'), ''); // not /etc/slurm/plugstack.conf
  writeFileSync(
    confPath,
    [
      'ClusterName=nsadbg',
      `SlurmctldHost=${nodeName}(127.0.0.1)`,
      'AuthType=auth/munge',
      'CredType=cred/munge',
      // read by the daemons and by every client command that loads this conf
      `AuthInfo=socket=${mungeSocket}`,
      'SlurmUser=root',
      'SlurmdUser=root',
      `SlurmctldPort=${ctldPort}`,
      `SlurmdPort=${slurmdPort}`,
      `StateSaveLocation=${dir}/state`,
      `SlurmdSpoolDir=${dir}/spool`,
      `SlurmctldPidFile=${dir}/slurmctld.pid`,
      `SlurmdPidFile=${dir}/slurmd.pid`,
      `SlurmctldLogFile=${dir}/slurmctld.log`,
      `SlurmdLogFile=${dir}/slurmd.log`,
      `PlugStackConfig=${dir}/plugstack.conf`,
      'MailProg=/bin/true',
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'JobAcctGatherType=jobacct_gather/none',
      'AccountingStorageType=accounting_storage/none',
      'JobCompType=jobcomp/none',
      'MpiDefault=none',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_Core',
      'ReturnToService=2',
      // finished jobs stay visible to `scontrol show job` (and `squeue -t all`) for 10 minutes
      'MinJobAge=600',
      // scancel: SIGTERM, then SIGKILL after 5 s instead of 30 s, so teardown stays quick
      'KillWait=5',
      'SlurmdParameters=config_overrides',
      `NodeName=${nodeName} NodeAddr=127.0.0.1 CPUs=${cpus} State=UNKNOWN`,
      `PartitionName=debug Nodes=${nodeName} Default=YES MaxTime=INFINITE State=UP`,
      `PartitionName=down Nodes=${nodeName} MaxTime=INFINITE State=DOWN`,
      '',
    ].join('\n'),
  );

  const children: ChildProcess[] = [];
  const daemon = (name: string, bin: string, args: string[]): ChildProcess => {
    // -F / -D keep each daemon in the foreground as our child; their stderr goes to NAME.out
    const out = openSync(join(dir, `${name}.out`), 'a');
    const child = spawn(bin, args, { cwd: dir, env: childEnv, stdio: ['ignore', out, out] });
    closeSync(out);
    children.push(child);
    return child;
  };
  const alive = (c: ChildProcess, name: string) => {
    if (c.exitCode !== null || c.signalCode !== null) {
      let log = '';
      try {
        log = readFileSync(join(dir, `${name}.out`), 'utf8').slice(-2000);
      } catch {}
      throw new Error(`${name} exited (${c.exitCode ?? c.signalCode}):\n${log}`);
    }
  };

  const run: SlurmCluster['run'] = (cmd, args) =>
    new Promise((resolve) => {
      execFile(cmd, args, { cwd: dir, env: childEnv, timeout: 30_000 }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      });
    });

  // a test that times out never reaches stop(): leave no daemon or job behind
  const onExit = () => {
    for (const pid of pidsUsingConf(confPath)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  };
  process.once('exit', onExit);

  const stop = async () => {
    process.removeListener('exit', onExit);
    try {
      if (children.every((c) => c.exitCode === null && c.signalCode === null)) {
        await run('/usr/bin/scancel', ['--user=root']);
        // wait (bounded) for the job steps to go; whatever is left gets SIGKILLed below
        await waitUntil(
          async () => (await run('/usr/bin/squeue', ['-h', '-t', 'R,CG,S'])).stdout.trim() === '',
          {
            timeoutMs: 8_000,
            intervalMs: 250,
            what: 'jobs to end',
          },
        ).catch(() => undefined);
      }
    } finally {
      for (const c of [...children].reverse()) {
        if (c.exitCode !== null || c.signalCode !== null) continue;
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      }
      onExit(); // stragglers: a slurmstepd or a job process that outlived the daemons
      rmSync(dir, { recursive: true, force: true });
    }
  };

  try {
    const munged = daemon('munged', '/usr/sbin/munged', [
      '-F',
      `--socket=${mungeSocket}`,
      `--key-file=${dir}/munge.key`,
      `--pid-file=${dir}/munged.pid`,
      `--log-file=${dir}/munged.log`, // unused with -F (logs go to stderr), kept off /var/log
      `--seed-file=${dir}/munged.seed`,
    ]);
    await waitUntil(
      () => {
        alive(munged, 'munged');
        return existsSync(mungeSocket);
      },
      {
        timeoutMs: 10_000,
        intervalMs: 50,
        what: 'munged socket',
      },
    );
    const ctld = daemon('slurmctld', '/usr/sbin/slurmctld', ['-D', '-f', confPath]);
    const slurmd = daemon('slurmd', '/usr/sbin/slurmd', ['-D', '-f', confPath, '-N', nodeName]);
    await waitUntil(
      async () => {
        alive(ctld, 'slurmctld');
        alive(slurmd, 'slurmd');
        const r = await run('/usr/bin/sinfo', ['-h', '-p', 'debug', '-n', nodeName, '-o', '%T']);
        return r.stdout.trim() === 'idle';
      },
      { timeoutMs: 30_000, intervalMs: 200, what: `slurm node ${nodeName} to be idle` },
    );
  } catch (err) {
    await stop();
    throw err;
  }

  return { dir, env, nodeName, pendingArgs: ['--partition=down'], run, stop };
}
