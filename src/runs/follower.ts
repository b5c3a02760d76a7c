import type { Target } from '../targets/target.js';
import { RunWatcher } from './run-watcher.js';

/** Something that follows a directory's files and hands over their bytes in order. */
export interface Follower {
  start(): void | Promise<void>;
  stop(): Promise<void>;
}

export type FollowerFactory = (
  target: Target,
  dir: string,
  onChunk: (name: string, chunk: Buffer) => void,
) => Follower;

/** the plain follower: tail every evidence file of the directory from byte 0 */
export const watchFollower: FollowerFactory = (target, dir, onChunk) => new RunWatcher(target, dir, onChunk);
