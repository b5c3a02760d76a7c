/**
 * The per-rank view of a many-rank run, in place of the heartbeat rows: one row per rank (step, lag
 * behind the leader, step time, toks/s, straggler score, stack-sample score (`*`: the straggler), last beat age, process state and CPU%,
 * stack group), the root-cause rank first on a crash or stall, and the stack diff's groups with
 * the odd one out highlighted. A pure view of `state.many`.
 */
import { Text } from 'ink';
import { type ManyRanks, STRAGGLER_FLAG } from '../src/analysis/rank-table.js';
import type { RankView } from '../src/session/state.js';
import { useClean } from './display.js';
import { positional } from './format.js';
import { type PaneProps, Rows } from './Rows.js';
import {
  bannerOf,
  byNode,
  type DiffLine,
  diffLines,
  MAX_DIFF_LINES,
  moreNodesText,
  NODE_SUMMARY_HEADER,
  nodeSummaries,
  orderedRows,
  rankHeader,
  rankList,
  rowText,
  stackLetters,
} from './rank-table-text.js';
import { type Tone, tone } from './theme.js';

export type RankTableProps = PaneProps & { many: ManyRanks; ranks: RankView[] };

function rowTone(view: RankView | undefined, straggler: number | null, named: boolean): Tone | null {
  if (view?.stall) return view.stall.hang ? 'bad' : 'warn';
  if (named || (straggler !== null && straggler >= STRAGGLER_FLAG)) return 'warn';
  return null;
}

export function RankTable(props: RankTableProps) {
  const { many, ranks, width, height, color } = props;
  const clean = useClean();
  const views = new Map(ranks.map((r) => [r.rank, r]));
  const rows = orderedRows(many);
  const letters = stackLetters(many);
  const cause = many.rootCause;
  const banner = bannerOf(many, ranks);
  const fixed = 1 + (banner ? 1 : 0);
  // the odd group first among the diff lines when they must be cut
  const allDiff = diffLines(many);
  const room = Math.max(0, height - fixed);
  const diffShown = Math.min(allDiff.length, MAX_DIFF_LINES, Math.max(0, room - Math.min(rows.length, 2)));
  const diff = [...allDiff.filter((d) => d.odd), ...allDiff.filter((d) => !d.odd)].slice(0, diffShown);
  const rowRoom = Math.max(0, room - diff.length);
  const fits = rows.length <= rowRoom;
  // many ranks across nodes: one row per node, the culprit's node first and opened
  if (!fits && byNode(many)) return <NodeRows {...props} banner={banner} diff={diff} />;
  const shown = fits ? rows : rows.slice(0, Math.max(0, rowRoom - 1));
  const hidden = rows.slice(shown.length);
  const maxLag = Math.max(0, ...hidden.map((r) => r.lag));
  return (
    <Rows width={width} height={height}>
      <Text bold wrap="truncate-end">
        {rankHeader(many)}
      </Text>
      {banner ? (
        <Text
          inverse
          bold
          color={tone(color, cause || ranks.some((r) => r.stall?.hang) ? 'bad' : 'warn')}
          wrap="truncate-end"
        >
          {clean(banner.join(' · '))}
        </Text>
      ) : null}
      {shown.map((r) => {
        const view = views.get(r.rank);
        const t = rowTone(view, r.straggler, r.namedStraggler);
        const l = letters.get(r.rank);
        return (
          <Text key={r.rank} wrap="truncate-end">
            <Text color={t ? tone(color, t) : undefined} bold={r.rank === cause?.rank}>
              {rowText(r, view, r.rank === cause?.rank)}
            </Text>
            {l ? (
              <Text inverse={l.odd} bold={l.odd} color={l.odd ? tone(color, 'bad') : undefined}>
                {`  ${l.letter}`}
              </Text>
            ) : null}
          </Text>
        );
      })}
      {hidden.length > 0 ? (
        <Text dimColor wrap="truncate-end">
          {`+${hidden.length} more rank${hidden.length === 1 ? '' : 's'} (${rankList(hidden.map((r) => r.rank))}, max lag ${maxLag})`}
        </Text>
      ) : null}
      {positional(diff).map(({ key, item }) => (
        <Text
          key={key}
          wrap="truncate-end"
          inverse={item.odd}
          bold={item.odd}
          color={item.odd ? tone(color, 'bad') : undefined}
          dimColor={!item.odd}
        >
          {clean(item.text)}
        </Text>
      ))}
    </Rows>
  );
}

function NodeRows({
  many,
  ranks,
  width,
  height,
  color,
  banner,
  diff,
}: RankTableProps & { banner: string[] | null; diff: DiffLine[] }) {
  const clean = useClean();
  const views = new Map(ranks.map((r) => [r.rank, r]));
  const nodes = nodeSummaries(many, ranks);
  const room = Math.max(0, height - 1 - (banner ? 1 : 0) - diff.length);
  const open = nodes[0]?.culprit ? nodes[0].rows : [];
  const openRoom = Math.max(0, Math.min(open.length, room - nodes.length));
  const fitsAll = nodes.length <= room - openRoom;
  const shownNodes = nodes.slice(0, Math.max(0, room - openRoom - (fitsAll ? 0 : 1)));
  const cut = nodes.slice(shownNodes.length);
  const cause = many.rootCause?.rank;
  return (
    <Rows width={width} height={height}>
      <Text bold wrap="truncate-end">
        {NODE_SUMMARY_HEADER}
      </Text>
      {banner ? (
        <Text inverse bold color={tone(color, 'bad')} wrap="truncate-end">
          {clean(banner.join(' · '))}
        </Text>
      ) : null}
      {shownNodes.flatMap((n, i) => [
        <Text
          key={n.node}
          wrap="truncate-end"
          bold={n.culprit}
          color={n.tone ? tone(color, n.tone) : undefined}
        >
          {clean(n.text)}
        </Text>,
        ...(i === 0 && n.culprit
          ? n.rows.slice(0, openRoom).map((r) => (
              <Text
                key={`${n.node}:${r.rank}`}
                wrap="truncate-end"
                dimColor={r.rank !== cause}
                bold={r.rank === cause}
              >
                {`  ${rowText(r, views.get(r.rank), r.rank === cause)}`}
              </Text>
            ))
          : []),
      ])}
      {cut.length > 0 ? (
        <Text dimColor wrap="truncate-end">
          {clean(moreNodesText(cut))}
        </Text>
      ) : null}
      {positional(diff).map(({ key, item }) => (
        <Text key={key} wrap="truncate-end" inverse={item.odd} bold={item.odd} dimColor={!item.odd}>
          {clean(item.text)}
        </Text>
      ))}
    </Rows>
  );
}
