import { join } from 'node:path';

/** The small real gloo DDP trainer the many-ranks, Slurm and `--hosts` tests run. */
export const DDP_TRAINER = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'ddp_ranks.py');

/**
 * A lane that runs it under Debian's torchrun (its `--redirects`/`--tee` must be 1 or 2 on Python
 * 3.11), with a detector quick enough for tests and no `.HALT` (the trainer does not poll it).
 */
export function ddpLane(o: {
  name: string;
  description: string;
  nproc: number;
  sigintWaitS: number;
  env?: string;
}) {
  return `name: ${o.name}
description: ${o.description}
launcher:
  torchrun:
    command: /usr/bin/python3 -m torch.distributed.run
    nproc_per_node: ${o.nproc}
    args: ["--redirects", "2", "--tee", "2"]
stepsFlag: ""
detector: { floorS: 3, spinConfirmS: 4, maxStepS: 60 }
stop: { halt: false, sigintWaitS: ${o.sigintWaitS} }
acceptance: { finiteLoss: true, noStall: true }
${o.env ?? ''}`;
}
