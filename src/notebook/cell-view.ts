import type { SessionController } from '../session/state.js';

/** the session seen from a cell's dashboard: `q` comes back to the notebook and stops nothing */
export function asCellView(session: SessionController, owned: SessionController | null): SessionController {
  const overrides: Partial<SessionController> = {
    quitConsequence: () => 'back to the notebook (the run is not stopped)',
    quit: async () => {
      if (owned) await owned.quit().catch(() => undefined);
    },
    switchLane: async () => {
      throw new Error('a cell keeps its lane: make a new cell from the notebook (n, r, e)');
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
