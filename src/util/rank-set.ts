/**
 * Rank sets in words that do not grow with the job: runs of three or more consecutive ranks become
 * ranges, and a long set says how many it holds. "rank 3", "ranks 0, 1 and 3", "255 ranks (0–254)",
 * "ranks 0–6, 8 and 10–12". At 512 ranks a list of every waiting rank was over 1,000 characters in
 * one sentence of the verdict.
 */

/** sorted, distinct ranks as "0–6, 8 and 10–12" (no leading word) */
export function rankRanges(ranks: readonly number[]): string {
  const sorted = [...new Set(ranks)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    if (j - i >= 2) parts.push(`${sorted[i]}–${sorted[j]}`);
    else for (let k = i; k <= j; k++) parts.push(String(sorted[k]));
    i = j + 1;
  }
  if (parts.length <= 1) return parts.join('');
  // past a handful of pieces the list itself is the noise: the count and the span say enough
  if (parts.length > MAX_PARTS) return `${parts.slice(0, MAX_PARTS - 1).join(', ')}, … ${parts.at(-1)}`;
  return `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

const MAX_PARTS = 8;
/** from this many ranks on, the count leads: "255 ranks (0–254)" */
const COUNT_FROM = 8;

/** "rank 3", "ranks 0, 1 and 3", "255 ranks (0–254)" */
export function rankSetText(ranks: readonly number[]): string {
  const n = new Set(ranks).size;
  if (n === 0) return 'no rank';
  if (n === 1) return `rank ${rankRanges(ranks)}`;
  if (n >= COUNT_FROM) return `${n} ranks (${rankRanges(ranks)})`;
  return `ranks ${rankRanges(ranks)}`;
}
