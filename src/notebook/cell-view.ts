import type { SessionController } from '../session/state.js';

const LANE_LOCKED = 'a cell keeps its lane: n, r or e in the notebook make a new cell';

/**
 * The session seen from a cell's dashboard: `q` goes straight back to the notebook and stops
 * nothing. `release` runs when the dashboard is left (the owner may dispose a finished session).
 */
export function asCellView(
  session: SessionController,
  owned: SessionController | null,
  release: () => void = () => {},
): SessionController {
  const overrides: Partial<SessionController> = {
    quitConsequence: () => 'back to the notebook (the run is not stopped)',
    quitAsks: () => false,
    laneLocked: () => LANE_LOCKED,
    quit: async () => {
      if (owned) await owned.quit().catch(() => undefined);
      release();
    },
    switchLane: async () => {
      throw new Error(LANE_LOCKED);
    },
  };
  // every other member is the session's own, bound to it (a Proxy, so members added later pass too)
  return new Proxy(session, {
    get(target, prop, _receiver) {
      if (prop in overrides) return overrides[prop as keyof SessionController];
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
