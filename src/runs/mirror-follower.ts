import type { FollowerFactory } from './follower.js';
import { EvidenceMirror, mirroredFiles } from './mirror.js';

/**
 * For remote runs: mirror the run dir into a local evidence folder and feed the engine the same
 * bytes. What an earlier nsa-dbg process already mirrored (before a crash or a SIGKILL) is replayed
 * from the local copy first, then the mirror resumes from the local sizes, so the engine sees every
 * byte once and the local copy ends byte-identical to the remote one.
 */
export function mirrorFollower(localDir: string, onError?: (e: Error) => void): FollowerFactory {
  return (target, dir, onChunk) => {
    const mirror = new EvidenceMirror(target, dir, localDir, { onChunk, ...(onError ? { onError } : {}) });
    return {
      async start() {
        for (const [name, b] of mirroredFiles(localDir)) onChunk(name, b);
        await mirror.start();
      },
      stop: () => mirror.close(),
    };
  };
}
