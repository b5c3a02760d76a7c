import { render } from 'ink';
import type { SessionController } from '../src/session/state.js';
import { App } from './App.js';

/**
 * The UI's entry: render the App for an engine controller until the user quits. Ink's own
 * console patching is off: nothing in the UI may print around the frame.
 */
export async function runTui(controller: SessionController): Promise<void> {
  let exit: () => void = () => {};
  const done = new Promise<void>((r) => {
    exit = r;
  });
  const ink = render(<App controller={controller} onExit={() => exit()} />, {
    exitOnCtrlC: false,
    patchConsole: false,
    maxFps: 20,
    incrementalRendering: false,
  });
  await done;
  ink.unmount();
  await ink.waitUntilExit().catch(() => undefined);
  process.exit(0);
}
