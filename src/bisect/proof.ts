/**
 * Which changes no run of a bisection ever applied: every run meant to have the change ran a
 * process that saw something else (a wrapper dropped it, a launcher reset it). Such a change is
 * neither blamed nor cleared, and the bisection says so.
 */

import type { BisectionRecord } from '../notebook/bisection-record.js';
import type { Notebook } from '../notebook/model.js';
import { notAppliedText } from '../notebook/run-proof.js';

export function neverApplied(
  nb: Notebook,
  b: BisectionRecord,
): Array<{ name: string; runs: number; saw: string }> {
  const byId = new Map(nb.cells.map((c) => [c.id, c]));
  return b.changes.flatMap((change, i) => {
    const cells = b.trials
      .filter((t) => t.subset.includes(i))
      .flatMap((t) => t.cells.map((id) => byId.get(id)));
    const misses = cells.map((c) => c?.proof?.notApplied.find((x) => x.name === change.name));
    if (cells.length === 0 || misses.some((m) => m === undefined)) return [];
    const saw = notAppliedText(misses[0]!, cells[0]?.proof?.ranks.length ?? 1);
    return [{ name: change.name, runs: cells.length, saw }];
  });
}
