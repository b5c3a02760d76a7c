/**
 * Who printed a line of a launcher's output: `srun --label`'s task and torchrun's rank prefixes,
 * read off the front of the line. One reader per output stream; it keeps the current line's task
 * and rank in fields (the parser asks for them per line, and no object is made per line).
 */

// torchrun's per-rank prefixes: `[rankN]:` (--local-ranks-filter / log_line_prefix_template) and
// `[defaultN]:` (--tee / --redirects: role name + local rank, the rank on a single node); some
// versions add one space after the colon, others none
const RANK_PREFIX = /^\[(?:rank|default)(\d+)\]:(?: (?=\S))?/;
/** srun --label: the task id, right-aligned to the widest one, then `: ` */
const SRUN_LABEL = /^ *(\d+): /;

/**
 * Output of `srun --label` (a Slurm run): each line starts with the task that printed it (`1: `),
 * one torchrun agent per task, so `[default0]:` is local rank 0 of that task's node; this gives
 * its global rank.
 */
export interface SrunTasks {
  globalRank(task: number, localRank: number): number;
}

export class LinePrefixes {
  /** the srun task of the current line (Slurm runs) */
  task: number | undefined;
  /** the global rank the current line's prefixes name */
  rank: number | undefined;

  constructor(private readonly srunTasks: SrunTasks | undefined) {}

  /** the line without its prefixes; `task` and `rank` say what they named */
  strip(text: string): string {
    let line = text;
    this.task = undefined;
    this.rank = undefined;
    if (this.srunTasks !== undefined) {
      const m = SRUN_LABEL.exec(line);
      if (m !== null) {
        this.task = Number(m[1]);
        line = line.slice(m[0].length);
      }
    }
    // nested on a current torch: `[default2]:[rank2]: ` (--tee around the worker's own
    // `[rankN]:`); `[rankN]` is global, `[defaultN]` the agent's local rank: the innermost global
    // one names the rank
    let global = false;
    while (line.charCodeAt(0) === 91 && (line.startsWith('[rank') || line.startsWith('[default'))) {
      const m = RANK_PREFIX.exec(line);
      if (m === null) break;
      if (line.startsWith('[rank')) {
        this.rank = Number(m[1]);
        global = true;
      } else if (!global) this.rank = this.globalOf(Number(m[1]));
      line = line.slice(m[0].length);
    }
    return line;
  }

  /** a local rank as printed by the current line's torchrun agent → the global rank */
  globalOf(local: number): number {
    return this.task === undefined || this.srunTasks === undefined
      ? local
      : this.srunTasks.globalRank(this.task, local);
  }
}
