import type { Lane } from '../lanes/lane.js';
import type { SpecOptions } from '../runs/build-spec.js';
import type { FollowerFactory } from '../runs/follower.js';
import type { RunSpec } from '../runs/launcher.js';
import type { Target } from '../targets/target.js';

export interface SessionOptions {
  target: Target;
  lanes: Map<string, Lane>;
  lane: string;
  /** everything buildRunSpec needs besides the lane (`launch`: how runs are launched) */
  spec: Omit<SpecOptions, 'lane'>;
  /** nvidia-smi argv on the target for a run (the demo passes its shim, which needs the run's dirs) */
  smi: (spec: RunSpec) => string[];
  simulated: boolean;
  /** publish at most this often (ms); 50 = 20 Hz */
  publishMs?: number;
  terminal?: { cols: number; rows: number };
  /** how a run's files are followed (remote: mirrored into a local evidence folder) */
  follower?: (spec: RunSpec) => FollowerFactory;
  /** the run folder on this machine (remote: the mirror); default: the run dir itself */
  localDir?: (spec: RunSpec) => string;
  /** work before the launch (remote demo: copy the demo trainer into the run dir) */
  prepareRun?: (spec: RunSpec) => Promise<void>;
  /** re-attach to this existing run dir instead of starting the lane */
  attachRunDir?: string;
  /** `attachRunDir` is a finished run's folder on this machine: read it to its end, nothing live */
  replay?: boolean;
}

/** the SSH link as the connection reports it; the snapshot turns `since` into a live outage length */
export interface LinkView {
  state: 'up' | 'down' | 'reconnecting';
  /** epoch ms when this state began */
  since: number;
  attempts: number;
}
