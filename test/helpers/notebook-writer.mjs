// A real process that owns a notebook: `write FILE` appends cells as fast as it can (printing
// "wrote N" after each), `hold FILE` takes the lock and waits. Driven by the notebook tests, which
// SIGKILL it. Uses the built engine (dist/), as the CLI does.
import { NotebookStore } from '../../dist/src/notebook/store.js';

const [mode, file] = process.argv.slice(2);
const store = NotebookStore.open(file);
if (mode === 'hold') {
  process.stdout.write('locked\n');
  setInterval(() => {}, 1 << 30);
} else {
  // big cells, so that a write takes long enough for a kill to land inside it
  const series = Array.from({ length: 4000 }, (_, i) => [i, Math.sin(i)]);
  for (let n = 1; ; n++) {
    store.dispatch({
      type: 'addCell',
      cell: {
        created: new Date(0).toISOString(),
        target: 'local',
        lane: {
          name: `lane-${n}`,
          description: '',
          source: '',
          sourceHash: '',
          env: {},
          args: [],
          acceptance: { finiteLoss: true, noStall: true },
        },
        env: {},
        command: ['python3'],
        cwd: '.',
        demo: true,
        runId: `r${n}`,
        runDir: `r${n}`,
        evidenceDir: `r${n}`,
        state: 'done',
        evidence: [],
        series: { loss: series, toks: series },
      },
    });
    // keep the file from growing without bound (a kill can land between the add and the delete)
    while (store.get().cells.length > 3) store.dispatch({ type: 'deleteCell', id: store.get().cells[0].id });
    process.stdout.write(`wrote ${n}\n`);
  }
}
