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
  const out: Array<{ name: string; runs: number; saw: string }> = [];
  for (const [i, change] of b.changes.entries()) {
    const cells = b.trials
      .filter((t) => t.subset.includes(i))
      .flatMap((t) => t.cells.map((id) => byId.get(id)));
    if (cells.length === 0) continue;
    const misses = cells.map((c) => c?.proof?.notApplied.find((x) => x.name === change.name));
    if (misses.some((m) => m === undefined)) continue;
    const first = misses[0]!;
    out.push({
      name: change.name,
      runs: cells.length,
      saw: notAppliedText(first, cells[0]?.proof?.ranks.length ?? 1),
    });
  }
  return out;
}
