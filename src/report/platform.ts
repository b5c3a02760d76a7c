/**
 * The header's Platform, PyTorch and CUDA, merged across the cells from the platform facts each
 * cell stored when its run ended (nvidia-smi and env.json): a cell without them (no env.json, no
 * GPU samples) is skipped, not taken as the answer; cells that disagree are said to.
 */
import type { Cell } from '../notebook/model.js';
import type { ReportModel } from './model.js';

type Platform = NonNullable<Cell['platform']>;

function gpuText(p: Platform): string | undefined {
  if (!p.gpu) return undefined;
  return `${p.gpuCount ?? 1}×${p.gpu}${p.gpuMemMiB ? ` ${Math.round(p.gpuMemMiB / 1024)}GB` : ''}`;
}

/** one value, or each value with the cells that reported it; cells that reported none are named */
function merged(cells: Cell[], pick: (p: Platform) => string | undefined, none: string): string {
  const by = new Map<string, string[]>();
  const missing: string[] = [];
  for (const c of cells) {
    const v = c.platform ? pick(c.platform) : undefined;
    if (v === undefined) missing.push(c.id);
    else by.set(v, [...(by.get(v) ?? []), c.id]);
  }
  if (by.size === 0) return none;
  if (by.size === 1) return [...by.keys()][0]!;
  const parts = [...by]
    .sort((a, b) => b[1].length - a[1].length)
    .map(([v, ids]) => `${v} (${ids.join(', ')})`);
  return `cells disagree: ${parts.join('; ')}${missing.length ? `; not recorded by ${missing.join(', ')}` : ''}`;
}

export function platformOf(cells: Cell[]): Pick<ReportModel, 'platform' | 'pytorch' | 'cuda'> {
  const demo = cells.some((c) => c.demo) ? ' (simulated: bundled demo trainer)' : '';
  return {
    platform: merged(cells, gpuText, 'unknown (no nvidia-smi samples)') + demo,
    pytorch: merged(cells, (p) => p.torch, 'unknown (no env.json)'),
    cuda: merged(cells, (p) => p.cuda, 'unknown (no env.json)'),
  };
}
