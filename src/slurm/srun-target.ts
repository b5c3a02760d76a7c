import { NodeRoutedTarget } from '../targets/node-routed.js';
import type { Target } from '../targets/target.js';

/**
 * A Slurm job's nodes, reached through `srun --overlap --jobid J -w NODE`: a step inside the job's
 * own allocation (Slurm ≥ 20.11), so the cluster's rules for who may touch what still hold.
 */
export class SrunTarget extends NodeRoutedTarget {
  constructor(base: Target, jobId: () => string | null, nodeOf: (pid: number) => string | null) {
    super(
      base,
      async (node, argv) => {
        const job = jobId();
        if (job === null) return null;
        return base.exec(
          ['srun', '--overlap', '--jobid', job, '-w', node, '-N', '1', '-n', '1', '--quiet', ...argv],
          { timeoutMs: 30_000 },
        );
      },
      nodeOf,
      () => `job ${jobId() ?? '?'}`,
    );
  }
}
