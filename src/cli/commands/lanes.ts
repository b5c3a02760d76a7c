import type { CommandModule } from 'yargs';
import { laneDirs } from '../../lanes/load.js';
import { loadLanesForCli } from '../load-lanes.js';

export const lanesCommand: CommandModule<object, { json?: boolean }> = {
  command: 'lanes',
  describe: 'list the lanes (env presets), the file each comes from and which file overrides which',
  builder: (y) => y.option('json', { type: 'boolean', describe: 'print JSON' }) as never,
  handler: (args) => {
    // a broken file is listed below, not on stderr as the other commands say it
    const lanes = loadLanesForCli([], () => {});
    const sorted = [...lanes.values()].sort((a, b) => a.name.localeCompare(b.name));
    const broken = lanes.broken.map((b) => ({
      file: b.file,
      names: b.names,
      field: b.error.field,
      ...(b.error.at ? { line: b.error.at.line, col: b.error.at.col } : {}),
      error: b.error.detail,
    }));
    if (args.json) {
      const list = sorted.map((p) => ({ ...p, overrides: lanes.overridden.get(p.name) ?? [] }));
      process.stdout.write(`${JSON.stringify({ lanes: list, broken, searched: laneDirs() }, null, 2)}\n`);
      return;
    }
    const w = Math.max(...sorted.map((p) => p.name.length));
    const pad = ' '.repeat(w);
    for (const p of sorted) {
      const env = Object.entries(p.env)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      const over = lanes.overridden.get(p.name);
      process.stdout.write(
        [
          `${p.name.padEnd(w)}  ${p.description}`,
          ...(env ? [`${pad}  ${env}`] : []),
          `${pad}  from ${p.source}${over?.length ? ` (overrides ${over.join(', ')})` : ''}`,
          '',
        ].join('\n'),
      );
    }
    if (lanes.broken.length) {
      process.stdout.write('\nnot loaded (these files are broken; the lanes above work without them):\n');
      for (const b of lanes.broken) process.stdout.write(`  ${b.error.message}\n`);
    }
    process.stdout.write(`\nsearched, each folder overriding the ones before it: ${laneDirs().join(', ')}\n`);
  },
};
