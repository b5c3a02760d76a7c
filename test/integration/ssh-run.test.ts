import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startSshd, type TestSshd } from '../helpers/sshd.js';
import { waitUntil } from '../helpers/wait.js';

let sshd: TestSshd;
let home: string;
beforeAll(async () => {
  sshd = await startSshd();
  sshd.trustHostKey();
  home = mkdtempSync(join(tmpdir(), 'nsa-home-'));
});
afterAll(async () => {
  await sshd?.stop();
});

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

/** every mirrored file is byte-identical to the remote one (the "remote" is this machine) */
function expectMirrorIdentical(remoteDir: string, localDir: string): void {
  const remote = readdirSync(remoteDir).filter(
    (n) => statSync(join(remoteDir, n)).isFile() && !n.includes('.tmp'),
  );
  expect(remote.length).toBeGreaterThan(3);
  for (const n of remote) {
    expect(existsSync(join(localDir, n)), `${n} mirrored`).toBe(true);
    expect(sha(join(localDir, n)), n).toBe(sha(join(remoteDir, n)));
  }
}

function remoteArgs(runs: string): string[] {
  return ['--host', 'target', '--ssh-config', sshd.configPath, '--runs-dir', runs];
}

/** `nsa-dbg run --headless --json` of the bundled demo on the test box */
function headlessDemo(runs: string, lane: string, steps: number, stepMs: number): string[] {
  return [
    'run',
    '--headless',
    '--json',
    ...remoteArgs(runs),
    '--lane',
    lane,
    '--demo',
    '--steps',
    String(steps),
    '--step-ms',
    String(stepMs),
  ];
}

describe('headless runs on a box over real OpenSSH', () => {
  it('batched-prefill demo: GO, verdict pass, local mirror byte-identical', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'nsa-remote-runs-'));
    const r = await runCli(headlessDemo(runs, 'batched-prefill', 8, 80), { env: { NSA_DBG_HOME: home } });
    expect(r.stderr).toBe('');
    expect(r.code, r.stdout).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ verdict: 'pass', stepsReached: 8, go: true, lane: 'batched-prefill' });
    expect(out.runDir.startsWith(runs)).toBe(true);
    expect(out.localDir.startsWith(home)).toBe(true);
    expectMirrorIdentical(out.runDir, out.localDir);
  });

  it('baseline demo: stall confirmed, dump taken, run stopped, NO-GO with the localisation', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'nsa-remote-runs-'));
    const r = await runCli(headlessDemo(runs, 'baseline', 20, 80), {
      env: { NSA_DBG_HOME: home },
      // the baseline lane spins in Python: a hang only after its 30 s spin confirm window
      timeoutMs: 150_000,
    });
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.verdict).toBe('hang');
    expect(out.stall).toMatchObject({ rank: 0, step: 6, where: 'in-step' });
    expect(out.go).toBe(false);
    expect(out.dumps.length).toBeGreaterThanOrEqual(1);
    expect(out.dumps[0].mainThreadTop.function).toBe('_forward_prefill_sequential');
    // stopped: the trainer is gone, and everything it wrote reached the mirror
    const pid = Number(readFileSync(join(out.runDir, 'pid'), 'utf8'));
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expectMirrorIdentical(out.runDir, out.localDir);
  }, 160_000);

  it('env values with $(...), quotes, spaces and newlines arrive literally', async () => {
    const project = mkdtempSync(join(tmpdir(), 'nsa-proj-'));
    mkdirSync(join(project, '.nsa-dbg', 'presets'), { recursive: true });
    const hostile = `$(touch ${project}/pwned) \`touch ${project}/pwned2\` 'sq' "dq"  two spaces\nline2 $HOME`;
    writeFileSync(
      join(project, '.nsa-dbg', 'presets', 'hostile.yaml'),
      `name: hostile\nenv:\n  HOSTILE: ${JSON.stringify(hostile)}\nstepsFlag: ""\n`,
    );
    const runs = mkdtempSync(join(tmpdir(), 'nsa-remote-runs-'));
    const r = await runCli(
      [
        'run',
        '--headless',
        '--json',
        ...remoteArgs(runs),
        '--lane',
        'hostile',
        '--',
        'python3',
        '-c',
        'import json, os; print("VAL=" + json.dumps(os.environ["HOSTILE"]))',
      ],
      { env: { NSA_DBG_HOME: home }, cwd: project },
    );
    const out = JSON.parse(r.stdout);
    const log = readFileSync(join(out.localDir, 'stdout.log'), 'utf8');
    const line = log.split('\n').find((l) => l.startsWith('VAL='))!;
    expect(JSON.parse(line.slice(4))).toBe(hostile);
    expect(existsSync(join(project, 'pwned'))).toBe(false);
    expect(existsSync(join(project, 'pwned2'))).toBe(false);
  });
});

async function waitForStep(runs: string, step: number): Promise<string> {
  const pad = String(step).padStart(4, '0');
  return waitUntil(
    () => {
      for (const id of existsSync(runs) ? readdirSync(runs) : []) {
        const log = join(runs, id, 'stdout.log');
        if (existsSync(log) && readFileSync(log, 'utf8').includes(`step ${pad} |`)) return join(runs, id);
      }
      return null;
    },
    { timeoutMs: 30_000, what: `remote step ${step}` },
  );
}

function stepLines(runDir: string): number[] {
  return [...readFileSync(join(runDir, 'stdout.log'), 'utf8').matchAll(/^step (\d{4}) \|/gm)].map((m) =>
    Number(m[1]),
  );
}

describe('links that drop and processes that die', () => {
  it('survives the connection being cut several times mid-run: nothing lost or duplicated', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'nsa-remote-runs-'));
    const pending = runCli(headlessDemo(runs, 'batched-prefill', 40, 100), {
      env: { NSA_DBG_HOME: home },
      timeoutMs: 120_000,
    });
    for (const step of [5, 12, 20, 28]) {
      await waitForStep(runs, step);
      // cut the link once it is up again: right after a cut the client may still be redialling
      // (its backoff starts at 500 ms, and steps come every 100 ms), with no session to cut yet
      await waitUntil(() => sshd.killSessions() > 0, {
        timeoutMs: 30_000,
        what: `a live session to cut at step ${step}`,
      });
    }
    const r = await pending;
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ verdict: 'pass', stepsReached: 40 });
    expectMirrorIdentical(out.runDir, out.localDir);
    expect(stepLines(out.localDir)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const beats = readFileSync(join(out.localDir, 'heartbeat_rank0.jsonl'), 'utf8').trim().split('\n');
    expect(new Set(beats).size).toBe(beats.length);
  });

  it('the TUI process killed with SIGKILL: the run goes on, and attach resumes the same run', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'nsa-remote-runs-'));
    let cliPid = 0;
    // 120 steps of 100 ms: the listing below must find the run still going, ~11 s after the kill
    const first = runCli(headlessDemo(runs, 'batched-prefill', 120, 100), {
      env: { NSA_DBG_HOME: home },
      onSpawn: (p) => (cliPid = p),
    });
    const runDir = await waitForStep(runs, 6);
    process.kill(cliPid, 'SIGKILL');
    expect((await first).code).toBeNull();
    const trainer = Number(readFileSync(join(runDir, 'pid'), 'utf8'));
    expect(existsSync(`/proc/${trainer}`)).toBe(true);

    const list = await runCli(['attach', ...remoteArgs(runs), '--json'], { env: { NSA_DBG_HOME: home } });
    const runsListed = JSON.parse(list.stdout);
    expect(runsListed).toHaveLength(1);
    expect(runsListed[0].status).toBe('running');
    const runId = runsListed[0].runId as string;

    const again = await runCli(['attach', ...remoteArgs(runs), runId.slice(-4), '--headless', '--json'], {
      env: { NSA_DBG_HOME: home },
      timeoutMs: 90_000,
    });
    expect(again.code, again.stdout).toBe(0);
    const out = JSON.parse(again.stdout);
    expect(out).toMatchObject({ verdict: 'pass', stepsReached: 120, runDir });
    expectMirrorIdentical(runDir, out.localDir);
    expect(stepLines(out.localDir)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));

    // a finished run attaches too: the same verdict at once, the mirror untouched
    const finished = await runCli(['attach', ...remoteArgs(runs), runId, '--headless', '--json'], {
      env: { NSA_DBG_HOME: home },
    });
    expect(finished.code, finished.stdout).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ verdict: 'pass', stepsReached: 120, exitCode: 0 });
    expectMirrorIdentical(runDir, out.localDir);
    expect(stepLines(out.localDir)).toHaveLength(120);
  });
});

describe('host keys over real OpenSSH', () => {
  it('refuses an unknown host with its fingerprint (exit 3), then --accept-new trusts it', async () => {
    writeFileSync(sshd.knownHostsPath, '');
    const runs = mkdtempSync(join(tmpdir(), 'nsa-remote-runs-'));
    const refused = await runCli(['attach', ...remoteArgs(runs)], { env: { NSA_DBG_HOME: home } });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(sshd.hostFingerprint());
    expect(refused.stderr).toMatch(/--accept-new/);
    const accepted = await runCli(['attach', ...remoteArgs(runs), '--accept-new'], {
      env: { NSA_DBG_HOME: home },
    });
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toMatch(/no runs/);
    expect(readFileSync(sshd.knownHostsPath, 'utf8')).toContain(`[127.0.0.1]:${sshd.port}`);
  });

  it('refuses a changed host key loudly (exit 3), even with --accept-new', async () => {
    sshd.trustHostKey();
    await sshd.restartWithNewHostKey();
    const runs = mkdtempSync(join(tmpdir(), 'nsa-remote-runs-'));
    const r = await runCli(['attach', ...remoteArgs(runs), '--accept-new'], { env: { NSA_DBG_HOME: home } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/changed|CHANGED/);
    writeFileSync(sshd.knownHostsPath, '');
    sshd.trustHostKey();
  });
});
