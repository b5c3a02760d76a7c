/**
 * Two fixed lines: who/what/where of the run, then whatever needs attention (connection outage,
 * demo marker, verdict, else the lane description). What a key or the engine says has a status
 * line of its own at the bottom (Dashboard's Footer), so a long banner never cuts it off.
 */
import { Box, Text } from 'ink';
import type { DashboardState, VerdictView } from '../src/session/state.js';
import { useClean } from './display.js';
import { formatDuration, formatSeconds } from './format.js';
import { runPhaseTone, type Tone, tone } from './theme.js';

export type HeaderProps = Pick<
  DashboardState,
  | 'target'
  | 'lane'
  | 'laneDescription'
  | 'runState'
  | 'startedAt'
  | 'endedAt'
  | 'now'
  | 'step'
  | 'stepsDone'
  | 'totalSteps'
  | 'pid'
  | 'exitCode'
  | 'simulated'
  | 'connection'
  | 'verdict'
  | 'launchLine'
  | 'stepFormat'
> & { width: number; color: boolean };

export const DEMO_MARKER = 'DEMO: simulated trainer and GPU';

function runStateText(p: HeaderProps, clean: (s: string) => string): string {
  if (p.runState === 'exited' && p.exitCode !== undefined && p.exitCode !== null)
    return `exited ${p.exitCode}`;
  return clean(p.runState);
}

function connectionText(c: NonNullable<HeaderProps['connection']>, clean: (s: string) => string): string {
  const parts = [`connection ${clean(c.state)}`];
  if (c.outageS !== undefined) parts.push(`for ${formatSeconds(c.outageS)}`);
  if (c.attempts !== undefined) parts.push(`${c.attempts} attempt${c.attempts === 1 ? '' : 's'}`);
  return parts.join(' · ');
}

export function Header(p: HeaderProps) {
  const clean = useClean();
  // the clock stops when the run ends
  const elapsed = p.startedAt !== null ? formatDuration((p.endedAt ?? p.now) - p.startedAt) : '–';
  const step = stepText(p);
  const outage = p.connection && p.connection.state !== 'up' ? connectionText(p.connection, clean) : null;
  const hasStatus = outage || p.simulated || p.verdict;
  return (
    <Box flexDirection="column" width={p.width} height={2} flexShrink={0}>
      <Text wrap="truncate-end">
        <Text bold>nsa-dbg</Text>
        <Text> {clean(p.target)} · lane </Text>
        <Text bold color={tone(p.color, 'accent')}>
          {clean(p.lane) || '–'}
        </Text>
        <Text> · </Text>
        <Text color={tone(p.color, runPhaseTone(p.runState, p.exitCode))}>{runStateText(p, clean)}</Text>
        <Text>
          {' '}
          · {elapsed} · step {step}
          {p.stepFormat ? ` (${clean(p.stepFormat)})` : ''}
          {p.launchLine ? ` · ${clean(p.launchLine)}` : p.pid !== undefined ? ` · pid ${p.pid}` : ''}
        </Text>
      </Text>
      <Text wrap="truncate-end">
        {outage ? (
          <Text bold color={tone(p.color, 'bad')}>
            {outage}
            {'  '}
          </Text>
        ) : null}
        {p.simulated ? (
          <Text color={tone(p.color, 'warn')}>
            {DEMO_MARKER}
            {'  '}
          </Text>
        ) : null}
        {p.verdict ? (
          <Text bold color={tone(p.color, verdictTone(p.verdict))}>
            {p.verdict.go === false ? 'NO-GO · ' : p.verdict.go ? 'GO · ' : ''}
            {clean(p.verdict.verdict).toUpperCase()}: {clean(withoutVerdictWord(p.verdict))}
            {p.verdict.go === false && p.verdict.reasons?.length
              ? ` — ${clean(p.verdict.reasons.join('; '))}`
              : ''}
            {'  '}
          </Text>
        ) : null}
        {!hasStatus ? <Text dimColor>{clean(p.laneDescription)}</Text> : null}
      </Text>
    </Box>
  );
}

function verdictTone(v: VerdictView): Tone {
  if (v.go === false) return 'bad';
  if (v.verdict === 'pass' || v.verdict === 'running') return 'ok';
  return v.verdict === 'busy' || v.verdict === 'suspect' || v.verdict === 'slow' ? 'warn' : 'bad';
}

/** "PASS: 12 steps", not "PASS: pass: 12 steps": the summary may start with the verdict itself */
function withoutVerdictWord(v: { verdict: string; summary: string }): string {
  const word = v.verdict.toLowerCase();
  const head = v.summary.slice(0, word.length).toLowerCase();
  if (head !== word) return v.summary;
  const rest = v.summary.slice(word.length);
  if (rest.startsWith(':')) return rest.slice(1).trimStart();
  return rest.startsWith(' at ') ? rest.trimStart() : v.summary;
}

/** "3/12", or "3/12 (4 running)" while step 4 is under way: the charts show finished steps */
function stepText(p: HeaderProps): string {
  const done = p.stepsDone ?? p.step;
  const total = p.totalSteps !== undefined ? `${done}/${p.totalSteps}` : String(done);
  return p.runState !== 'exited' && p.step > done ? `${total} (${p.step} running)` : total;
}
