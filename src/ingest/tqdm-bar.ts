/**
 * One drawing of a tqdm progress bar, as tqdm's default format writes it (and the formats Hugging
 * Face's Trainer and PyTorch Lightning pass it): `{desc}: {percentage:3.0f}%|{bar}| {n}/{total}
 * [{elapsed}<{remaining}, {rate}{postfix}]`, or without a known total `{desc}: {n}it [{elapsed},
 * {rate}{postfix}]` (Lightning's format keeps `{n}/{total}`: `45/?`). The rate is `12.34it/s`, `1.23s/it` below one per second (unless the format
 * asks for `rate_noinv`, as Lightning's does), or `?it/s` before there is one.
 */

export interface TqdmBar {
  /** the text before the bar (`Epoch 0`), '' when none */
  desc: string;
  n: number;
  total?: number;
  /** seconds per iteration from the rate shown (undefined while tqdm shows `?`) */
  secondsPerIt?: number;
  /** `key=value` pairs after the rate (`v_num=0, train_loss=2.310`) */
  postfix: Record<string, string>;
}

const R_BAR =
  /(\d+)(?:\/(\d+|\?)|it) \[[^<,\]]*(?:<[^,\]]*)?, *(\?|\d+(?:\.\d+)?)([kMG]?)(it\/s|s\/it)(?:, (.*?))? *\] *$/;
const SCALE: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9 };

/** Cheap test before the regex: a bar ends with `]` and shows a rate. */
export function mayBeBar(line: string): boolean {
  let end = line.length - 1;
  while (end > 0 && line.charCodeAt(end) === 32) end--;
  return line.charCodeAt(end) === 93 /* ] */ && (line.includes('it/s') || line.includes('s/it'));
}

export function parseTqdmBar(line: string): TqdmBar | null {
  const m = R_BAR.exec(line);
  if (m === null) return null;
  const bar: TqdmBar = { desc: barDesc(line.slice(0, m.index)), n: Number(m[1]), postfix: {} };
  if (m[2] !== undefined && m[2] !== '?') bar.total = Number(m[2]);
  if (m[3] !== '?') {
    const rate = Number(m[3]) * SCALE[m[4]!]!;
    const perIt = m[5] === 's/it' ? rate : 1 / rate;
    if (Number.isFinite(perIt) && perIt > 0) bar.secondsPerIt = perIt;
  }
  for (const kv of m[6]?.split(', ') ?? []) {
    const eq = kv.indexOf('=');
    if (eq > 0) bar.postfix[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return bar;
}

/** `Epoch 0:  45%|████▌     | ` or `Epoch 0: ` → `Epoch 0` */
function barDesc(head: string): string {
  const pct = head.lastIndexOf('%|');
  let d = pct < 0 ? head : head.slice(0, pct).replace(/\s*\d+$/, '');
  d = d.trim();
  return d.endsWith(':') ? d.slice(0, -1) : d;
}
