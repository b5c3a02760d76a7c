import type { CommandModule } from 'yargs';
import { loadPresets, presetDirs } from '../../presets/load.js';

export const lanesCommand: CommandModule<object, { json?: boolean }> = {
  command: 'lanes',
  describe: 'list the lanes (env presets) and where they come from',
  builder: (y) => y.option('json', { type: 'boolean', describe: 'print JSON' }) as never,
  handler: (args) => {
    const presets = [...loadPresets().values()].sort((a, b) => a.name.localeCompare(b.name));
    if (args.json) {
      process.stdout.write(`${JSON.stringify(presets, null, 2)}\n`);
      return;
    }
    const w = Math.max(...presets.map((p) => p.name.length));
    for (const p of presets) {
      const env = Object.entries(p.env)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      process.stdout.write(`${p.name.padEnd(w)}  ${p.description}\n${' '.repeat(w)}  ${env}\n`);
    }
    process.stdout.write(`\nsearched: ${presetDirs().join(', ')}\n`);
  },
};
