/**
 * One row per rank: phase, step, how long since its last beat against what the stall detector
 * expects, and a sparkline of recent gaps. A stalled rank also gets a banner at the top that says
 * HANG (the verdict's own word, as the header's banner says it), where (step + localisation) and how
 * long it has been silent.
 */
import { Text } from 'ink';
import type { RankView } from '../src/session/state.js';
import { sparkline } from './charts/sparkline.js';
import { useClean } from './display.js';
import { formatSeconds, padCut, positional, wrapPhrases } from './format.js';
import { MAX_RANK_ROWS } from './layout.js';
import { type PaneProps, Rows } from './Rows.js';
import { type Tone, tone } from './theme.js';

export type HeartbeatPanelProps = PaneProps & { ranks: RankView[] };

/**
 * The banner's phrases, e.g. HANG rank 0 · step 6 · in-step · 14s silent · CPU busy. Silence alone
 * is SUSPECT while the rank is checked; BUSY when it was found alive (a warning, not a stall);
 * HANG only once the evidence confirmed a hang (stuck or blocked-native). One word per state
 * everywhere (header, this banner, the notebook's status line, the README): the verdict's.
 */
export function stallPhrases(rank: RankView): string[] {
  const s = rank.stall;
  if (!s) return [];
  const head = s.hang ? 'HANG' : s.state === 'busy' ? 'BUSY' : 'SUSPECT';
  const state = s.hang && s.state ? ` (${s.state})` : '';
  const phrases = [
    `${head} rank ${rank.rank}${state}`,
    `step ${s.step}`,
    s.where,
    `${Math.round(s.silenceS)}s silent`,
  ];
  if (s.cpuBusy !== null) phrases.push(s.cpuBusy ? 'CPU busy' : 'CPU idle');
  if (s.why) phrases.push(s.why);
  return phrases;
}

function ageTone(r: RankView): Tone | null {
  if (r.stall) return r.stall.hang ? 'bad' : 'warn';
  if (r.lastBeatAgeS === null) return null;
  if (r.thresholdS !== null && r.lastBeatAgeS >= r.thresholdS) return 'bad';
  if (r.expectedS !== null && r.lastBeatAgeS > r.expectedS) return 'warn';
  return 'ok';
}

function RankRow({ r, width, color }: { r: RankView; width: number; color: boolean }) {
  // the phase is the trainer's own word from its heartbeat file
  const phase = useClean()(r.phase);
  // Aligned columns when there is room; packed tight in a half-width pane at 80 columns.
  const head =
    width >= 60
      ? `r${r.rank} ${padCut(phase, 10)} step ${String(r.step).padEnd(5)}`
      : `r${r.rank} ${phase} step ${r.step} `;
  const age = `${formatSeconds(r.lastBeatAgeS)} / exp ${formatSeconds(r.expectedS)}`;
  const sparkWidth = Math.max(0, width - head.length - age.length - 2);
  const t = ageTone(r);
  return (
    <Text wrap="truncate-end">
      <Text>{head}</Text>
      <Text color={t ? tone(color, t) : undefined} bold={t === 'bad'}>
        {age}
      </Text>
      {sparkWidth > 0 ? <Text dimColor> {sparkline(r.gaps, { width: sparkWidth, min: 0 })}</Text> : null}
    </Text>
  );
}

export function HeartbeatPanel({ ranks, width, height, color }: HeartbeatPanelProps) {
  const clean = useClean();
  const banners = ranks.filter((r) => r.stall).flatMap((r) => wrapPhrases(stallPhrases(r).map(clean), width));
  // Rows left under the title and banners; when ranks do not all fit, one row says how many are hidden.
  const room = Math.max(0, height - 1 - banners.length);
  const fits = ranks.length <= Math.min(MAX_RANK_ROWS, room);
  const shownCount = fits ? ranks.length : Math.max(0, Math.min(MAX_RANK_ROWS, room - 1));
  const hidden = ranks.length - shownCount;
  return (
    <Rows width={width} height={height}>
      <Text bold wrap="truncate-end">
        heartbeats
      </Text>
      {positional(banners).map(({ key, item: line }) => (
        <Text key={key} inverse bold color={tone(color, 'bad')} wrap="truncate-end">
          {line}
        </Text>
      ))}
      {ranks.length === 0 ? (
        <Text dimColor wrap="truncate-end">
          no heartbeats yet
        </Text>
      ) : null}
      {ranks.slice(0, shownCount).map((r) => (
        <RankRow key={r.rank} r={r} width={width} color={color} />
      ))}
      {hidden > 0 ? (
        <Text dimColor wrap="truncate-end">
          +{hidden} more rank{hidden === 1 ? '' : 's'}
        </Text>
      ) : null}
    </Rows>
  );
}
