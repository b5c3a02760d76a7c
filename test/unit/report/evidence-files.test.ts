// A cell's evidence files in the report: every name while a kind has few, one entry per kind of
// numbered file once there are many (512 ranks write over a thousand files).
import { describe, expect, it } from 'vitest';
import { evidenceFilesText } from '../../../src/report/cell-findings.js';

describe('evidence files in the report', () => {
  it('lists every name of a small run as before', () => {
    const files = ['command.json', 'heartbeat_rank0.jsonl', 'stackdump_1795464176.txt', 'stdout.log'];
    expect(evidenceFilesText(files)).toBe(files.map((f) => `\`${f}\``).join(', '));
  });

  it('folds a kind past 16 files into one entry with its count, in place', () => {
    const files = [
      'command.json',
      ...Array.from({ length: 512 }, (_, r) => `heartbeat_rank${r}.jsonl`),
      ...Array.from({ length: 512 }, (_, r) => `nsa-dbg-stacks_rank${r}_pid${4000 + r}.log`),
      'nodes.jsonl',
      'stdout.log',
    ];
    const text = evidenceFilesText(files);
    expect(text).toBe(
      '`command.json`, `heartbeat_rank*.jsonl` (512 files), `nsa-dbg-stacks_rank*_pid*.log` (512 files), `nodes.jsonl`, `stdout.log`',
    );
  });
});
