/**
 * The report's lines on how ranks ended beside their last words: the kernel's OOM kills ("rank 2 —
 * killed by SIGKILL: the kernel log says OOM killer, 210 MiB RSS") and nsa-dbg's teardown snapshot
 * ("when rank 2 exited: ranks 0 and 1 in state S (…)"). Read from the analysis a cell keeps, which
 * another nsa-dbg may have written: anything malformed is left out.
 */
import { rssText, type TeardownReport, teardownSummary } from '../analysis/teardown.js';
import type { Cell } from '../notebook/model.js';
import { analysisList, isObj } from './cells.js';

export function oomKillLines(c: Cell): string[] {
  const kills = analysisList(c, 'oomKills', (k) => typeof k.rank === 'number' && typeof k.pid === 'number');
  return kills.map((k) => {
    const rss = typeof k.anonRssKiB === 'number' ? `, ${rssText(k.anonRssKiB)}` : '';
    const limit = k.memcg === true ? ' (a cgroup memory limit)' : '';
    return `rank ${k.rank} — killed by SIGKILL: the kernel log says OOM killer${limit}${rss} (pid ${k.pid})`;
  });
}

export function teardownLine(c: Cell): string[] {
  const t = c.analysis?.teardown;
  // ranks ending one after another in a run that passed, or one nsa-dbg stopped, is no teardown
  if (c.analysis?.verdict === 'pass' || c.analysis?.verdict === 'stopped') return [];
  if (!isObj(t) || typeof t.trigger !== 'string' || !Array.isArray(t.ranks)) return [];
  const ranks = t.ranks
    .filter(isObj)
    .filter((r) => typeof r.rank === 'number' && (r.state === null || typeof r.state === 'string'))
    .map((r) => ({
      rank: r.rank as number,
      pid: typeof r.pid === 'number' ? r.pid : 0,
      state: r.state as TeardownReport['ranks'][number]['state'],
      cpuPct: typeof r.cpuPct === 'number' ? r.cpuPct : null,
      ...(typeof r.wchan === 'string' && r.wchan ? { wchan: r.wchan } : {}),
    }));
  const crashRank = isObj(c.analysis?.crash) ? (c.analysis.crash.rank as number | undefined) : undefined;
  const text = teardownSummary({ at: 0, trigger: t.trigger, ranks }, crashRank);
  return text ? [`nsa-dbg's look at the first sign of teardown: ${text}`] : [];
}
