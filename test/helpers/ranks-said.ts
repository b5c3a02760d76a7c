/**
 * The ranks a verdict summary's clauses ending in `end` name ("ranks 0–2 were …", "rank 1 was …",
 * "ranks 1, 3 and 5 were …"), as numbers: the last-words tests read the sentence, not a field.
 */
export function ranksSaid(summary: string, end: string): number[] {
  const out: number[] = [];
  for (const clause of summary.split('; ').filter((c) => c.endsWith(end))) {
    const set = /^ranks? ([\d–, and]+?) (?:was|were) /.exec(clause)?.[1] ?? '';
    for (const part of set.split(/, | and /)) {
      const [a, b] = part.split('–').map(Number);
      for (let k = a!; k <= (b ?? a!); k++) out.push(k);
    }
  }
  return out.sort((x, y) => x - y);
}
