import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { KeyState } from '../src/session/keymap.js';
import type { SessionController } from '../src/session/state.js';
import { initialUiState, type UiAction, type UiState, uiReducer } from '../src/session/ui-reducer.js';
import { Dashboard, dashboardLayout } from './Dashboard.js';
import { DisplayMode } from './display.js';
import { useRoutedKeys } from './hooks/use-routed-keys.js';
import { useUiReducer } from './hooks/use-ui-reducer.js';
import { type KeyContext, type KeyEffect, routeKey } from './key-router.js';
import { logTextRows, maxLogScroll } from './layout.js';
import { statusLines } from './status-line.js';
import { colorFromEnv } from './theme.js';
import { useTransientNotice } from './use-notice.js';
import { useTerminalSize } from './use-terminal-size.js';

export interface AppProps {
  controller: SessionController;
  onExit: () => void;
  /** colours on/off; defaults to the NO_COLOR convention */
  color?: boolean;
  /** ASCII-only drawing (runTui decides it from --ascii and the locale) */
  ascii?: boolean;
  /** hand the terminal to the run's own PTY (the caller unmounts the UI meanwhile) */
  onTerminal?: () => void;
  /** a line to show first (e.g. why the terminal hand-over could not happen) */
  initialNotice?: string;
  /** Ctrl+Z: give the terminal back and stop until `fg` (the screen owner does it) */
  onSuspend?: () => void;
}

export const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** the controller's newest snapshot: the dashboard's, or the notebook's */
export function useSnapshot<S>(controller: { getState(): S; subscribe(cb: (s: S) => void): () => void }): S {
  const [state, setState] = useState(() => controller.getState());
  useEffect(() => {
    setState(controller.getState());
    return controller.subscribe(setState);
  }, [controller]);
  return state;
}

export function App({
  controller,
  onExit,
  color = colorFromEnv(),
  ascii = false,
  onTerminal,
  initialNotice,
  onSuspend,
}: AppProps) {
  const state = useSnapshot(controller);
  const { columns, rows } = useTerminalSize();
  const lanes = useMemo(() => controller.lanes(), [controller]);
  const [notice, showNotice] = useTransientNotice();
  const [quitting, setQuitting] = useState(false);
  const shownNotice = notice ?? state.notice;
  const layout = useMemo(
    () => dashboardLayout(state, columns, rows, statusLines(shownNotice, Math.max(20, columns))),
    [state, columns, rows, shownNotice],
  );
  const keys: KeyState = {
    ended: state.runState === 'exited',
    laneLocked: controller.laneLocked?.() ?? null,
    quitAsks: controller.quitAsks?.() ?? true,
  };
  const keyContext: KeyContext = {
    lanes,
    logPage: logTextRows(layout.bottom.logHeight, true),
    maxScroll: maxLogScroll(state.log.lines.length, layout.bottom.logHeight),
    stopping: state.runState === 'stopping',
    keys,
  };

  const [ui, uiRef, apply] = useUiReducer<UiState, UiAction>(uiReducer, initialUiState);

  // Keep a scrolled-up log window on the same lines while output arrives; a shrinking total means
  // a new run replaced the log. Adjusted during render so no frame shows the window jump.
  const [seenTotal, setSeenTotal] = useState(state.log.total);
  if (state.log.total !== seenTotal) {
    setSeenTotal(state.log.total);
    apply([
      state.log.total < seenTotal
        ? { type: 'logReset' }
        : { type: 'logGrew', added: state.log.total - seenTotal, maxScroll: keyContext.maxScroll },
    ]);
  }

  useEffect(() => {
    if (initialNotice) showNotice(initialNotice);
  }, [initialNotice, showNotice]);

  const current = { controller, onExit, onTerminal, onSuspend, keyContext, lane: state.lane, quitting };
  const latest = useRef(current);
  latest.current = current;

  const runEffect = useCallback(
    (effect: KeyEffect) => {
      const { controller: c } = latest.current;
      const failed = (what: string) => (e: unknown) => showNotice(`${what} failed: ${errorText(e)}`);
      switch (effect.kind) {
        case 'hotFrames':
          c.sampleHotFrames().then(showNotice, failed('sampling'));
          return;
        case 'killNow':
          showNotice('SIGKILL to the trainer and its children');
          c.killNow().catch(failed('kill'));
          return;
        case 'dump':
          showNotice('requesting a stack dump…');
          c.requestDump().then(showNotice, failed('stack dump'));
          return;
        case 'switchLane':
          showNotice(`stopping lane ${latest.current.lane || '–'}, starting ${effect.lane}…`);
          c.switchLane(effect.lane).then(
            () => showNotice(`lane ${effect.lane} started`),
            failed('lane switch'),
          );
          return;
        case 'terminal':
          if (latest.current.onTerminal) latest.current.onTerminal();
          else showNotice('no terminal to hand over here');
          return;
        case 'notice':
          showNotice(effect.text);
          return;
        case 'suspend':
          if (latest.current.onSuspend) latest.current.onSuspend();
          else showNotice('nothing to suspend to here');
          return;
        case 'cancelJob':
          if (!c.cancelJob) showNotice('not a Slurm run: no job to cancel');
          else c.cancelJob().then(showNotice, failed('scancel'));
          return;
        case 'quit': {
          setQuitting(true);
          latest.current.quitting = true;
          // Exit even when stopping failed: the user asked to leave, and the consequence was shown.
          const exit = () => latest.current.onExit();
          c.quit().then(exit, exit);
          return;
        }
      }
    },
    [showNotice],
  );

  useRoutedKeys({
    ui: uiRef,
    apply,
    runEffect,
    route: (one, flags, current) => routeKey(one, flags, current, latest.current.keyContext),
    // the lane picker's filter is a text field; anywhere else a chunk of keys is key by key
    textMode: (current) => current.overlay === 'lanes',
    before: (input, key) => {
      if (!latest.current.quitting) return false;
      // quitting waits for the stop ladder; a second q (or Ctrl+C) does not wait for SIGINT
      if (input === 'q' || (key.ctrl && input === 'c')) runEffect({ kind: 'killNow' });
      return true;
    },
    halted: () => latest.current.quitting,
  });

  return (
    <DisplayMode ascii={ascii}>
      <Dashboard
        state={state}
        ui={ui}
        columns={columns}
        rows={rows}
        color={color}
        notice={notice}
        lanes={lanes}
        quitConsequence={ui.overlay === 'quit' ? controller.quitConsequence() : ''}
        cancelJobText={ui.overlay === 'cancelJob' ? (controller.cancelJobText?.() ?? null) : null}
        quitting={quitting}
        quitAsks={keys.quitAsks}
      />
    </DisplayMode>
  );
}
