/**
 * The selected cell's detail under the list: a run's steps, loss, rate, verdict and evidence
 * folder; a box check's fail and warn lines (measured, expected, source); a queued cell's place.
 * A pure view.
 */
import { Box, Text } from 'ink';
import type { NotebookViewState } from '../../src/notebook/controller-types.js';
import type { NotebookUi } from '../../src/notebook/view-reducer.js';
import { rateOrDash } from '../../src/util/rate.js';
import { useClean } from '../display.js';
import { tone } from '../theme.js';
import { checkDetail, detailVerdict } from './cell-line.js';
import type { ScreenPart } from './NotebookScreen.js';
import { selectedQueued } from './route.js';

/** a check cell's detail shows at most this many fail and warn lines */
const CHECK_LINES = 5;

export function CellDetail({ state, ui, color }: ScreenPart) {
  const clean = useClean();
  const c = state.notebook.cells[ui.selected];
  const q = selectedQueued({ cells: state.notebook.cells, queued: state.queued }, ui);
  if (q)
    return (
      <Text wrap="truncate-end">
        {q.qid} {q.lane} · queued{q.what ? ` · ${clean(q.what)}` : ''} · runs when the cells before it have
        ended; x takes it off the queue
      </Text>
    );
  if (!c) return null;
  const verdict = detailVerdict(c);
  const s = c.summary;
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        {c.id} {c.lane.name} · {c.target} · {c.started ?? c.created}
        {c.git ? ` · ${c.git.sha.slice(0, 10)}${c.git.dirty ? ' dirty' : ''}` : ''}
      </Text>
      {s ? (
        <Text wrap="truncate-end">
          steps {s.stepsReached} · loss {s.firstLoss ?? '–'} → {s.lastLoss ?? '–'} (min {s.minLoss ?? '–'}) ·{' '}
          {rateOrDash(s.medianToksPerS)} toks/s · peak {s.peakMemMiB ?? '–'} MiB
        </Text>
      ) : null}
      {verdict ? <Text wrap="truncate-end">{clean(verdict)}</Text> : null}
      {c.kind === 'check' ? (
        checkDetail(c, CHECK_LINES).map((l, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the lines have no identity of their own
          <Text key={i} wrap="truncate-end" color={tone(color, l.startsWith('FAIL') ? 'bad' : 'warn')}>
            {clean(l)}
          </Text>
        ))
      ) : (
        <Text wrap="truncate-end" dimColor>
          {clean(c.evidenceDir)}
        </Text>
      )}
    </Box>
  );
}

/** the lines a selected check cell's detail adds (its fail and warn lines) */
export function checkRows(state: NotebookViewState, ui: NotebookUi): number {
  const c = state.notebook.cells[ui.selected];
  return c?.kind === 'check' ? checkDetail(c, CHECK_LINES).length : 0;
}
