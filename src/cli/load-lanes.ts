import { brokenLaneLines, type LaneSet, loadLanes } from '../lanes/load.js';

/**
 * The lanes for a command, each broken lane file said once on stderr (path, position, field, why)
 * before anything runs: the rest of the lanes work, and only using a broken one is an error.
 */
export function loadLanesForCli(
  using: readonly string[] = [],
  write: (line: string) => void = (line) => process.stderr.write(`nsa-dbg: ${line}\n`),
): LaneSet {
  const lanes = loadLanes();
  for (const line of brokenLaneLines(lanes, using)) write(line);
  return lanes;
}

/**
 * For a long-lived view that loads the lanes again as files change (the notebook): each broken file
 * is told once, when it is first seen broken (and again only if it breaks differently).
 */
export function lanesReporter(tell: (lines: string[]) => void): () => LaneSet {
  const told = new Set<string>();
  return () => {
    const lanes = loadLanes();
    const fresh = brokenLaneLines(lanes).filter((l) => !told.has(l));
    for (const l of fresh) told.add(l);
    if (fresh.length) tell(fresh);
    return lanes;
  };
}
