import { execFileSync } from 'node:child_process';

/**
 * The trainer's git commit and whether its work tree has changes, when `cwd` is inside a git
 * repository (else undefined: no git, not a repo, or git too slow).
 */
export function gitInfo(cwd: string): { sha: string; dirty: boolean } | undefined {
  const git = (args: string[]) =>
    execFileSync('git', ['-C', cwd, ...args], {
      encoding: 'utf8',
      timeout: 5000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  try {
    const sha = git(['rev-parse', 'HEAD']).trim();
    if (!/^[0-9a-f]{40}$/.test(sha)) return undefined;
    const dirty = git(['status', '--porcelain', '--untracked-files=no']).trim() !== '';
    return { sha, dirty };
  } catch {
    return undefined;
  }
}
