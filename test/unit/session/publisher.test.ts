/**
 * The snapshot is built for someone: with a subscriber at most once per publish tick, and with
 * none (a headless run) only when it is asked for. At 512 ranks, building one a second for nobody
 * took a fifth of the engine's time while a hang was being concluded.
 */
import { describe, expect, it } from 'vitest';
import { SnapshotPublisher } from '../../../src/session/publisher.js';

function counted() {
  let builds = 0;
  const pub = new SnapshotPublisher((now) => ({ n: ++builds, now }));
  return { pub, builds: () => builds };
}

describe('SnapshotPublisher', () => {
  it('nobody subscribed: a publish tick builds nothing; get() builds once per change', () => {
    const { pub, builds } = counted();
    expect(builds()).toBe(1); // the first snapshot
    pub.markDirty();
    pub.publishIfDirty();
    pub.publishIfDirty();
    expect(builds()).toBe(1);
    expect(pub.get().n).toBe(2);
    expect(pub.get().n).toBe(2);
    expect(builds()).toBe(2);
    pub.markDirty();
    expect(pub.get().n).toBe(3);
  });

  it('a subscriber gets every snapshot built; get() hands out the one it was given', () => {
    const { pub, builds } = counted();
    const seen: number[] = [];
    pub.subscribe((s) => seen.push(s.n));
    pub.markDirty();
    // asked between ticks: the last one handed out, not a build the subscriber never saw
    expect(pub.get().n).toBe(1);
    pub.publishIfDirty();
    pub.publishIfDirty();
    expect(seen).toEqual([2]);
    expect(pub.get().n).toBe(2);
    expect(builds()).toBe(2);
  });

  it('a slower pace (a dashboard of many ranks): every other tick, but a notice goes out on the next one', () => {
    const { pub } = counted();
    const seen: number[] = [];
    pub.subscribe((s) => seen.push(s.n));
    const tick = (every: number) => {
      pub.markDirty(); // the clock's tick: ages move every second
      pub.publishOnTick(every);
    };
    tick(2);
    expect(seen).toEqual([]);
    tick(2);
    expect(seen).toEqual([2]);
    tick(2);
    pub.setNotice('dump requested');
    pub.publishOnTick(2);
    expect(seen).toEqual([2, 3]);
    expect(pub.current().n).toBe(3);
    // the pace again from the notice's publish
    tick(2);
    expect(seen).toEqual([2, 3]);
    tick(2);
    expect(seen).toEqual([2, 3, 4]);
    // at the usual pace every tick publishes
    tick(1);
    tick(1);
    expect(seen).toEqual([2, 3, 4, 5, 6]);
  });
});
