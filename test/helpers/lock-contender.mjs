// One of several processes racing to open the same notebook (test/integration/notebook-lock.test.ts).
// For each line `go TRIAL AT_MS` on stdin it spins until AT_MS (so every contender calls open in
// the same instant), opens the notebook and prints `TRIAL held` or `TRIAL in-use` (anything else:
// `TRIAL error MESSAGE`). A store it opened is dropped without closing, as a killed nsa-dbg would
// leave it; the test then makes the lock stale again. Uses the built engine (dist/), as the CLI does.
import { createInterface } from 'node:readline';
import { NotebookInUse } from '../../dist/src/notebook/lock.js';
import { NotebookStore } from '../../dist/src/notebook/store.js';

const [file] = process.argv.slice(2);
const held = [];
createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, trial, at] = line.split(' ');
  if (cmd !== 'go') return;
  while (Date.now() < Number(at)) {
    // spin: a timer would wake each contender at a different moment
  }
  try {
    held.push(NotebookStore.open(file));
    process.stdout.write(`${trial} held\n`);
  } catch (e) {
    process.stdout.write(e instanceof NotebookInUse ? `${trial} in-use\n` : `${trial} error ${e.message}\n`);
  }
});
process.stdout.write('ready\n');
