/**
 * The per-rank view of a many-rank run (panels/RankTable.tsx): 8 ranks at 80×24, the root-cause
 * rank first, the stack diff's odd one out highlighted. Colours are forced on so that the
 * highlight (inverse) can be seen in the frame.
 */
import { vi } from 'vitest';

vi.hoisted(() => {
  process.env.FORCE_COLOR = '1';
});

import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { Dashboard } from '../../panels/Dashboard.js';
import { DisplayMode } from '../../panels/display.js';
import { computeLayout } from '../../panels/layout.js';
import { RankTable } from '../../panels/RankTable.js';
import type { ManyRanks, RankRow } from '../../src/analysis/rank-table.js';
import type { Frame } from '../../src/ingest/events.js';
import type { DashboardState } from '../../src/session/state.js';
import { initialUiState } from '../../src/session/ui-reducer.js';
import { DEFAULT_LANES } from '../helpers/fake-controller.js';
import { frameLines, renderAt } from '../helpers/render.js';
import { DUMP, logLines, rank0, runningState } from './sample-state.js';

const f = (file: string, line: number, fn: string): Frame => ({ file, line, function: fn });
const ALL_REDUCE = [
  f('/root/nsa-vibe/scripts/train_ddp.py', 88, 'main'),
  f('/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py', 2501, 'all_reduce'),
];
const BACKWARD = [
  f('/root/nsa-vibe/scripts/train_ddp.py', 88, 'main'),
  f('/root/nsa-vibe/nsa/core/attention.py', 142, 'backward'),
];

const row = (rank: number, partial: Partial<RankRow> = {}): RankRow => ({
  rank,
  step: 12,
  lag: 0,
  stepTimeS: 0.52,
  toksPerS: 12_345,
  straggler: 1,
  score: null,
  namedStraggler: false,
  procState: 'S',
  cpuPct: 0,
  ...partial,
});

/** 8 ranks hung at step 12: rank 7 stuck in backward, the others wait in the all_reduce */
const HUNG: ManyRanks = {
  rows: [
    ...Array.from({ length: 7 }, (_, r) => row(r)),
    row(7, { step: 11, lag: 1, stepTimeS: 1.9, straggler: 3.65, procState: 'R', cpuPct: 99 }),
  ],
  rootCause: { rank: 7, why: 'in its own code (backward nsa/core/attention.py:142) while ranks 0-6 wait' },
  stackDiff: {
    groups: [
      {
        ranks: [0, 1, 2, 3, 4, 5, 6],
        frames: ALL_REDUCE,
        userTop: ALL_REDUCE[0]!,
        inCollective: true,
        odd: false,
      },
      { ranks: [7], frames: BACKWARD, userTop: BACKWARD[1]!, inCollective: false, odd: true },
    ],
    noDump: [],
    stopped: [],
  },
};

const ranks = (n: number) =>
  Array.from({ length: n }, (_, r) =>
    rank0({
      rank: r,
      step: r === n - 1 ? 11 : 12,
      lastBeatAgeS: 30,
      stall: { step: 12, where: 'in-step', silenceS: 30, cpuBusy: r === n - 1, hang: true },
    }),
  );

const table = (many: ManyRanks, height = 14, width = 80, ascii = false) =>
  frameLines(
    render(
      <DisplayMode ascii={ascii}>
        <RankTable many={many} ranks={ranks(many.rows.length)} width={width} height={height} color={false} />
      </DisplayMode>,
    ).lastFrame(),
  );

function dashboard(state: DashboardState, columns = 80, rows = 24): string[] {
  const r = renderAt(
    <Dashboard
      state={state}
      ui={initialUiState}
      columns={columns}
      rows={rows}
      color={false}
      lanes={DEFAULT_LANES}
      quitConsequence="The run will be stopped."
    />,
    columns,
    rows,
  );
  const lines = r.lines();
  r.unmount();
  return lines;
}

describe('RankTable', () => {
  it('puts the root-cause rank first, with its banner, then the others by rank', () => {
    const lines = table(HUNG);
    expect(lines[0]).toMatch(
      /^rank\s+step\s+lag\s+s\/step\s+toks\/s\s+strag\s+score\s+beat\s+st\s+cpu%\s+stack/,
    );
    expect(lines[1]).toContain('ROOT CAUSE rank 7');
    expect(lines[1]).toContain('backward');
    expect(lines[2]).toMatch(/^>r7\s+11\s+-1\s+1\.9s\s+12\.3k\s+3\.65\s+–\s+30\.0s\s+R\s+99%\s+B$/);
    expect(lines[3]).toMatch(/^ r0\s+12\s+0\s+0\.5s\s+12\.3k\s+1\.00\s+–\s+30\.0s\s+S\s+0%\s+A$/);
    expect(lines.slice(2, 10).map((l) => /r(\d)/.exec(l)?.[1])).toEqual([
      '7',
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
    ]);
  });

  it('shows each rank’s stack-sample score, a star on the named straggler', () => {
    const many: ManyRanks = {
      rows: [0, 1, 2].map((r) => row(r, { score: r === 2 ? 0.97 : 0.86, namedStraggler: r === 2 })),
      rootCause: null,
      stackDiff: null,
    };
    const lines = table(many);
    const line = (r: number) => lines.find((l) => l.startsWith(` r${r} `)) ?? '';
    expect(line(0)).toMatch(/^ r0\s+12\s+0\s+0\.5s\s+12\.3k\s+1\.00\s+0\.86\s+30\.0s/);
    expect(line(2)).toMatch(/^ r2\s+12\s+0\s+0\.5s\s+12\.3k\s+1\.00\s+0\.97\*\s+30\.0s/);
  });

  it('groups the stacks and marks the odd one out', () => {
    const lines = table(HUNG);
    const odd = lines.find((l) => l.startsWith('B r7:'));
    expect(odd).toBe('B r7: backward core/attention.py:142 (ODD ONE OUT)');
    expect(lines).toContain('A r0-6: all_reduce distributed/distributed_c10d.py:2501 (in collective)');
  });

  it('highlights the odd group (inverse) and not the others', () => {
    const frame = render(
      <RankTable many={HUNG} ranks={ranks(8)} width={80} height={14} color={false} />,
    ).lastFrame()!;
    const oddLine = frame.split('\n').find((l) => l.includes('B r7:'))!;
    const evenLine = frame.split('\n').find((l) => l.includes('A r0-6:'))!;
    expect(oddLine).toContain('\u001b[7m');
    expect(evenLine).not.toContain('\u001b[7m');
  });

  it('lists ranks that gave no dump', () => {
    const many = { ...HUNG, stackDiff: { ...HUNG.stackDiff!, noDump: [8, 9] } };
    expect(table(many)).toContain('- r8,9: no dump (blocked outside Python)');
  });

  it('lists stopped ranks apart: they cannot answer until SIGCONT', () => {
    const many = { ...HUNG, stackDiff: { ...HUNG.stackDiff!, stopped: [7] } };
    expect(table(many)).toContain('- r7: no dump (stopped, state T: signals wait for SIGCONT)');
  });

  it('summarises the ranks that do not fit, keeping the root cause and the odd group', () => {
    const many: ManyRanks = {
      ...HUNG,
      rows: [...Array.from({ length: 15 }, (_, r) => row(r)), row(15, { step: 9, lag: 3 })],
      rootCause: { rank: 15, why: 'stopped (T)' },
    };
    const lines = table(many, 12);
    expect(lines).toHaveLength(12);
    expect(lines[2]).toMatch(/^>r15 /);
    expect(lines.some((l) => /^\+\d+ more ranks \(r\d+-14, max lag 0\)$/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith('B r7:'))).toBe(true);
  });

  it('strips escapes from remote text and stays ASCII in ASCII mode', () => {
    const unknown = row(8, {
      stepTimeS: null,
      toksPerS: null,
      straggler: null,
      procState: null,
      cpuPct: null,
    });
    const many = {
      ...HUNG,
      rows: [...HUNG.rows, unknown],
      rootCause: { rank: 7, why: 'evil \u001b]0;title\u0007 → here' },
    };
    const lines = table(many, 14, 80, true);
    expect(lines.join('\n')).not.toContain('\u001b');
    expect(lines.join('\n')).toMatch(/^[\x20-\x7e\n]*$/);
    expect(lines[1]).toContain('ROOT CAUSE rank 7');
  });
});

describe('layout with the rank table', () => {
  it('never uses more than rows - 1 lines and gives the table the full width', () => {
    for (const [columns, rows] of [
      [80, 24],
      [120, 40],
      [60, 20],
      [80, 12],
      [40, 8],
    ] as const) {
      for (const rankTableRows of [3, 12, 40]) {
        const l = computeLayout({
          columns,
          rows,
          rankCount: 8,
          stallBanners: [],
          gpuCount: 8,
          processCount: 4,
          hasDump: true,
          rankTableRows,
        });
        const sum =
          l.headerHeight + l.footerHeight + l.charts.totalHeight + l.status.height + l.bottom.height;
        expect(sum, `${columns}x${rows}`).toBe(l.frameHeight);
        expect(l.frameHeight).toBeLessThanOrEqual(rows - 1);
        expect(l.status.sideBySide).toBe(false);
        expect(l.status.hbWidth).toBe(Math.max(20, columns));
      }
    }
  });
});

describe('Dashboard with many ranks', () => {
  const state = () =>
    runningState({
      ranks: ranks(8),
      many: HUNG,
      dump: DUMP,
      log: { lines: logLines(200), total: 200 },
    });

  it('fits 8 ranks, the root cause and the stack diff into 80x24', () => {
    const lines = dashboard(state());
    expect(lines.length).toBeLessThanOrEqual(23);
    const at = lines.findIndex((l) => l.startsWith('rank  step'));
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toContain('ROOT CAUSE rank 7');
    const shown = lines.slice(at + 2, at + 10).map((l) => /^[> ]r(\d)/.exec(l)?.[1]);
    expect(shown).toEqual(['7', '0', '1', '2', '3', '4', '5', '6']);
    expect(lines[at + 10]).toMatch(/^B r7: backward/);
    expect(lines[at + 11]).toMatch(/^A r0-6:/);
  });

  it('keeps the heartbeat rows for a single rank', () => {
    const lines = dashboard(runningState());
    expect(lines.some((l) => l.startsWith('heartbeats'))).toBe(true);
    expect(lines.some((l) => l.startsWith('rank  step'))).toBe(false);
  });

  it('a run across nodes: rows grouped by node with node and local rank, the culprit marked in its node', () => {
    const place = (rank: number): Partial<RankRow> => ({
      node: rank < 4 ? 'gpu-a' : 'gpu-b',
      localRank: rank % 4,
    });
    const many: ManyRanks = {
      ...HUNG,
      // nodes.jsonl order: gpu-b's agent joined first
      rows: [4, 5, 6, 7, 0, 1, 2, 3].map((r) => ({ ...HUNG.rows[r]!, ...place(r) })),
    };
    const lines = table(many, 14, 100);
    expect(lines[0]).toMatch(/^node\s+lr\s+rank\s+step/);
    expect(lines[1]).toContain('ROOT CAUSE rank 7 on gpu-b');
    // node order kept, rank 7 marked where it is (not moved to the top)
    expect(lines.slice(2, 10).map((l) => l.slice(0, 20).trim())).toEqual([
      'gpu-b       0  r4',
      'gpu-b       1  r5',
      'gpu-b       2  r6',
      'gpu-b       3 >r7',
      'gpu-a       0  r0',
      'gpu-a       1  r1',
      'gpu-a       2  r2',
      'gpu-a       3  r3',
    ]);
  });

  it('64 ranks on 8 nodes: one row per node, the culprit node first with its ranks under it', () => {
    const rows = Array.from({ length: 64 }, (_, r) =>
      row(r, {
        node: `gpu-${Math.floor(r / 8)}`,
        localRank: r % 8,
        step: r === 45 ? 11 : 12,
        lag: r === 45 ? 1 : 0,
        stepTimeS: r === 45 ? 1.9 : 0.5,
      }),
    );
    const many: ManyRanks = {
      rows,
      rootCause: { rank: 45, why: 'stopped (state T) while the others wait for it' },
      stackDiff: {
        groups: [
          {
            ranks: rows.map((r) => r.rank).filter((r) => r !== 45),
            frames: ALL_REDUCE,
            userTop: ALL_REDUCE[0]!,
            inCollective: true,
            odd: false,
          },
          { ranks: [45], frames: BACKWARD, userTop: BACKWARD[1]!, inCollective: false, odd: true },
        ],
        noDump: [],
        stopped: [],
      },
    };
    const lines = table(many, 22, 100);
    expect(lines[0]).toMatch(/^node\s+ranks\s+step\s+lag\s+slowest\s+silent\s+stacks/);
    expect(lines[1]).toContain('ROOT CAUSE rank 45 on gpu-5');
    expect(lines[2]).toMatch(/^gpu-5\s+>\s*r40-47\s+11-12\s+-1\s+r45 1\.9s/);
    // its ranks under it, the culprit marked; then the other nodes, one row each, in agent order
    expect(lines.slice(3, 11).some((l) => /^\s+gpu-5\s+5 >r45\s+11\s+-1/.test(l))).toBe(true);
    const others = lines.filter((l) => /^gpu-\d\s/.test(l)).map((l) => l.split(/\s+/)[0]);
    expect(others).toEqual(['gpu-5', 'gpu-0', 'gpu-1', 'gpu-2', 'gpu-3', 'gpu-4', 'gpu-6', 'gpu-7']);
    expect(lines.length).toBeLessThanOrEqual(22);
  });

  it('names a node whose every rank went silent while the other node still beats', () => {
    const many: ManyRanks = {
      rows: [0, 1, 2, 3].map((r) => row(r, { node: r < 2 ? 'gpu-a' : 'gpu-b', localRank: r % 2 })),
      rootCause: null,
      stackDiff: null,
    };
    const views = [0, 1, 2, 3].map((r) =>
      rank0({
        rank: r,
        lastBeatAgeS: r >= 2 ? 40 : 0.5,
        stall: r >= 2 ? { step: 12, where: 'in-step', silenceS: 40, cpuBusy: null, hang: false } : null,
      }),
    );
    const lines = frameLines(
      render(
        <DisplayMode ascii={false}>
          <RankTable many={many} ranks={views} width={100} height={10} color={false} />
        </DisplayMode>,
      ).lastFrame(),
    );
    expect(lines[1]).toContain('NODE gpu-b SILENT AS A WHOLE');
    expect(lines[1]).toContain('lost host or dead agent?');
  });

  it('512 ranks on 64 nodes: the odd nodes first, then agent order; no line grows with the count', () => {
    // rank 301 (node-37) stuck in its own code; node-12's ranks 96–103 are behind (lag 2); the rest wait
    const node = (r: number) => `node-${String(Math.floor(r / 8)).padStart(2, '0')}`;
    const many: ManyRanks = {
      rows: Array.from({ length: 512 }, (_, r) =>
        row(r, { node: node(r), localRank: r % 8, ...(r >= 96 && r < 104 ? { lag: 2, step: 10 } : {}) }),
      ),
      rootCause: {
        rank: 301,
        why: 'in its own code (backward nsa/core/attention.py:142) while 511 ranks (0–300, 302–511) wait',
      },
      stackDiff: {
        groups: [
          {
            ranks: Array.from({ length: 512 }, (_, r) => r).filter((r) => r !== 301),
            frames: ALL_REDUCE,
            userTop: ALL_REDUCE[0]!,
            inCollective: true,
            odd: false,
          },
          { ranks: [301], frames: BACKWARD, userTop: BACKWARD[1]!, inCollective: false, odd: true },
        ],
        noDump: [],
        stopped: [],
      },
    };
    const views = Array.from({ length: 512 }, (_, r) => rank0({ rank: r, lastBeatAgeS: 1, stall: null }));
    const lines = frameLines(
      render(
        <DisplayMode ascii={false}>
          <RankTable many={many} ranks={views} width={100} height={24} color={false} />
        </DisplayMode>,
      ).lastFrame(),
    );
    expect(lines.length).toBeLessThanOrEqual(24);
    expect(lines[1]).toContain('ROOT CAUSE rank 301 on node-37');
    const nodes = lines.filter((l) => /^node-\d\d\s/.test(l)).map((l) => l.split(/\s+/)[0]);
    // the culprit's node, then the node behind, then the others in agent order
    expect(nodes.slice(0, 3)).toEqual(['node-37', 'node-12', 'node-00']);
    const more = lines.find((l) => l.startsWith('+'));
    expect(more).toMatch(/^\+\d+ more nodes \(node-\d\d, node-\d\d, node-\d\d, … \d+ more\)$/);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);
  });
});
