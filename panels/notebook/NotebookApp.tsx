import { useCallback, useMemo, useRef, useState } from 'react';
import type { NotebookController } from '../../src/notebook/controller.js';
import { knownFlags } from '../../src/notebook/flags.js';
import { notebookCommandForKey } from '../../src/notebook/keymap.js';
import {
  initialNotebookUi,
  type NotebookUi,
  type NotebookUiAction,
  notebookUiReducer,
} from '../../src/notebook/view-reducer.js';
import type { SessionController } from '../../src/session/state.js';
import { App, errorText, useSnapshot } from '../App.js';
import { DisplayMode } from '../display.js';
import { useRoutedKeys } from '../hooks/use-routed-keys.js';
import { useUiReducer } from '../hooks/use-ui-reducer.js';
import { colorFromEnv } from '../theme.js';
import { useTerminalSize } from '../use-terminal-size.js';
import { NotebookScreen } from './NotebookScreen.js';
import { type NotebookEffect, type NotebookKeyContext, routeNotebookKey, rowCount } from './route.js';

/** what the App needs of the controller: the notebook engine, or a test's stand-in for its calls */
export type NotebookAppController = Pick<
  NotebookController,
  | 'getState'
  | 'subscribe'
  | 'lanes'
  | 'start'
  | 'rerun'
  | 'runEdited'
  | 'delete'
  | 'unqueue'
  | 'openCell'
  | 'setNotice'
  | 'bisect'
> & { report(): string } & Partial<Pick<NotebookController, 'commandFor' | 'close' | 'killNow' | 'check'>>;

/** what the notebook showed when a cell's dashboard handed the terminal to its run (`t`) */
export interface NotebookResume {
  ui: NotebookUi;
  cellView: SessionController;
}

export interface NotebookAppProps {
  controller: NotebookAppController;
  onExit: () => void;
  color?: boolean;
  ascii?: boolean;
  /** `t` in a cell's dashboard: hand the terminal to its run, then come back to this */
  onTerminal?: (resume: NotebookResume) => void;
  /** back from the run's terminal: the same list state and the same cell's dashboard */
  resume?: NotebookResume;
  /** a line for the cell's dashboard to show first (the hand-over ended, or could not happen) */
  initialNotice?: string;
  /** Ctrl+Z, here or in a cell's dashboard: give the terminal back and stop until `fg` */
  onSuspend?: () => void;
}

const TEXT_MODES = new Set(['lanes', 'flags', 'value', 'palette']);

export function NotebookApp({
  controller,
  onExit,
  color = colorFromEnv(),
  ascii = false,
  onTerminal,
  resume,
  initialNotice,
  onSuspend,
}: NotebookAppProps) {
  const state = useSnapshot(controller);
  const { columns, rows: height } = useTerminalSize();
  const lanes = useMemo(() => controller.lanes(), [controller]);
  // each with the command a new cell of it runs, shown in the picker before anything starts
  const pickerLanes = useMemo(
    () =>
      lanes.map((p) => ({
        name: p.name,
        description: p.description,
        runs: controller.commandFor?.(p) ?? undefined,
      })),
    [controller, lanes],
  );
  const flags = useMemo(() => knownFlags(lanes), [lanes]);
  const [cellView, setCellView] = useState<SessionController | null>(resume?.cellView ?? null);

  const [ui, uiRef, apply] = useUiReducer<NotebookUi, NotebookUiAction>(
    notebookUiReducer,
    resume?.ui ?? initialNotebookUi,
  );

  const ctx: NotebookKeyContext = {
    cells: state.notebook.cells,
    lanes: pickerLanes,
    flags,
    running: state.running,
    queued: state.queued,
    bisections: state.notebook.bisections?.length ?? 0,
  };
  const [quitting, setQuitting] = useState(false);
  const latest = useRef({ controller, ctx, cellView, onExit, onSuspend, quitting });
  latest.current = { controller, ctx, cellView, onExit, onSuspend, quitting };

  // a new cell goes after the others (before the queued ones): select it so Enter opens what just
  // started; a queued cell joins the end without moving the selection
  const count = state.notebook.cells.length;
  const rows = rowCount(ctx);
  const [seen, setSeen] = useState({ count, rows });
  if (count !== seen.count || rows !== seen.rows) {
    setSeen({ count, rows });
    apply([{ type: 'select', index: count > seen.count ? count - 1 : uiRef.current.selected, count: rows }]);
  }

  const runEffect = useCallback(
    (e: NotebookEffect) => {
      const c = controller;
      switch (e.kind) {
        case 'start':
          c.start({ lane: e.lane });
          return;
        case 'check':
          if (c.check) c.check(e.lane);
          else c.setNotice('the box cannot be checked from here');
          return;
        case 'rerun':
          c.rerun(e.id);
          return;
        case 'runEdited':
          c.runEdited(e.id, e.edits);
          return;
        case 'delete':
          c.delete(e.id);
          return;
        case 'unqueue':
          c.unqueue(e.qid);
          return;
        case 'bisect':
          c.bisect(e.a, e.b);
          return;
        case 'notice':
          c.setNotice(e.text);
          return;
        case 'report':
          try {
            c.setNotice(`report written: ${c.report()}`);
          } catch (err) {
            c.setNotice(`report failed: ${errorText(err)}`);
          }
          return;
        case 'open':
          c.setNotice(`opening ${e.id}…`);
          c.openCell(e.id).then(
            (view) => {
              if (view) setCellView(view);
              c.setNotice(view ? `${e.id}: q comes back to the notebook` : `no cell ${e.id}`);
            },
            (err: unknown) => c.setNotice(`cannot open ${e.id}: ${errorText(err)}`),
          );
          return;
        case 'suspend':
          if (latest.current.onSuspend) latest.current.onSuspend();
          else c.setNotice('nothing to suspend to here');
          return;
        case 'quit': {
          // the view stays up (raw mode, the countdown, `q` again) while the running cell stops
          setQuitting(true);
          latest.current.quitting = true;
          const exit = () => latest.current.onExit();
          if (c.close) c.close().then(exit, exit);
          else exit();
          return;
        }
      }
    },
    [controller],
  );

  // always subscribed, also under a cell's dashboard (`before` leaves those keys to it): toggling
  // `isActive` let raw mode drop to zero between the dashboard's unmount and this re-subscribing,
  // and a key typed in that gap was lost
  useRoutedKeys({
    ui: uiRef,
    apply,
    runEffect,
    route: (one, flags, current) => routeNotebookKey(one, flags, current, latest.current.ctx),
    textMode: (current) => TEXT_MODES.has(current.mode),
    before: (input, key) => {
      // the cell's dashboard owns the keys while it is open
      if (latest.current.cellView) return true;
      if (!latest.current.quitting) return false;
      // the stop ladder runs: a second q (or Ctrl+C) does not wait for SIGINT; Ctrl+Z still suspends
      const command = notebookCommandForKey(input, key);
      if (command === 'quit') latest.current.controller.killNow?.();
      if (command === 'suspend') latest.current.onSuspend?.();
      return true;
    },
  });

  if (cellView)
    return (
      <App
        controller={cellView}
        ascii={ascii}
        color={color}
        onExit={() => setCellView(null)}
        onSuspend={onSuspend}
        initialNotice={resume?.cellView === cellView ? initialNotice : undefined}
        onTerminal={onTerminal ? () => onTerminal({ ui: uiRef.current, cellView }) : undefined}
      />
    );
  return (
    <DisplayMode ascii={ascii}>
      <NotebookScreen
        state={state}
        ui={ui}
        lanes={pickerLanes}
        flags={flags}
        columns={columns}
        rows={height}
        color={color}
        notice={state.notice}
        quitting={quitting}
      />
    </DisplayMode>
  );
}
