/**
 * `nvidia-smi -q` (the NVSMI LOG) read as a tree by indentation: the section names move between
 * driver versions (Clocks Throttle Reasons became Clocks Event Reasons; HW Thermal Slowdown sits
 * under HW Slowdown), so keys are looked up by name anywhere under their section rather than by
 * a fixed path.
 */
import { numberOf } from './sources.js';

export interface LogNode {
  key: string;
  value?: string;
  children: LogNode[];
}

/** the whole log as a tree; a `GPU 00000000:…` line opens one GPU's subtree */
export function parseSmiLog(text: string): LogNode {
  const root: LogNode = { key: '', children: [] };
  const stack: Array<{ indent: number; node: LogNode }> = [{ indent: -1, node: root }];
  for (const raw of text.split('\n')) {
    if (raw.trim() === '' || /^=+/.test(raw.trim())) continue;
    const indent = raw.length - raw.trimStart().length;
    const colon = raw.indexOf(':');
    // `GPU 00000000:04:00.0` has colons in its key: a key never starts with a PCI address
    const isGpu = /^GPU [0-9A-Fa-f]{4,8}:/.test(raw.trim());
    const key = (isGpu || colon < 0 ? raw : raw.slice(0, colon)).trim();
    const node: LogNode = { key, children: [] };
    if (!isGpu && colon >= 0) node.value = raw.slice(colon + 1).trim();
    while (stack.length > 1 && stack[stack.length - 1]!.indent >= indent) stack.pop();
    stack[stack.length - 1]!.node.children.push(node);
    stack.push({ indent, node });
  }
  return root;
}

/** the first node named one of `keys`, depth first under `node` */
export function findNode(node: LogNode | undefined, ...keys: string[]): LogNode | undefined {
  if (!node) return undefined;
  for (const c of node.children) {
    if (keys.includes(c.key)) return c;
    const deeper = findNode(c, ...keys);
    if (deeper) return deeper;
  }
  return undefined;
}

/** the value at a path of names, each found anywhere under the one before */
export function valueAt(node: LogNode | undefined, ...path: string[][]): string | undefined {
  let cur = node;
  for (const keys of path) cur = findNode(cur, ...keys);
  return cur?.value;
}

export interface SmiGpu {
  busId: string;
  name: string;
  uuid?: string;
  persistence?: string;
  migCurrent?: string;
  /** reason → Active / Not Active */
  clockReasons: Record<string, string>;
  /** section (Volatile / Aggregate) → summed uncorrectable counts; undefined: N/A */
  eccUncorrected: { volatile?: number; aggregate?: number };
  retiredPending?: string;
  remapped: { uncorrectable?: number; pending?: string; failure?: string };
  /** driver 580's `Channel Repair Pending`, `TPC Repair Pending`, `Unrepairable Memory` that read Yes */
  repairs: string[];
  pcie: { genMax?: number; genCurrent?: number; widthMax?: number; widthCurrent?: number };
  memory: { totalMiB?: number; usedMiB?: number; reservedMiB?: number };
}

export interface SmiLog {
  driver?: string;
  cuda?: string;
  gpus: SmiGpu[];
}

const CLOCK_REASONS = ['Clocks Event Reasons', 'Clocks Throttle Reasons'];

function flatReasons(section: LogNode | undefined, out: Record<string, string> = {}): Record<string, string> {
  for (const c of section?.children ?? []) {
    if (c.value !== undefined) out[c.key] = c.value;
    flatReasons(c, out);
  }
  return out;
}

/** the uncorrectable counts of one ECC section (SRAM parity/SEC-DED, DRAM; older: Total) */
function uncorrected(section: LogNode | undefined): number | undefined {
  let sum: number | undefined;
  const walk = (n: LogNode) => {
    for (const c of n.children) {
      if (/uncorrectable|double bit|^total$/i.test(c.key) && numberOf(c.value) !== undefined)
        sum = (sum ?? 0) + numberOf(c.value)!;
      walk(c);
    }
  };
  if (section) walk(section);
  return sum;
}

function gpuOf(node: LogNode): SmiGpu {
  const ecc = findNode(node, 'ECC Errors');
  const pcie = findNode(node, 'GPU Link Info');
  const gen = findNode(pcie, 'PCIe Generation');
  const width = findNode(pcie, 'Link Width');
  const fb = findNode(node, 'FB Memory Usage');
  const remap = findNode(node, 'Remapped Rows');
  return {
    busId: node.key.replace(/^GPU /, ''),
    name: valueAt(node, ['Product Name']) ?? '?',
    uuid: valueAt(node, ['GPU UUID']),
    persistence: valueAt(node, ['Persistence Mode']),
    migCurrent: valueAt(node, ['MIG Mode'], ['Current']),
    clockReasons: flatReasons(findNode(node, ...CLOCK_REASONS)),
    eccUncorrected: {
      volatile: uncorrected(findNode(ecc, 'Volatile')),
      aggregate: uncorrected(findNode(ecc, 'Aggregate')),
    },
    retiredPending: valueAt(node, ['Retired Pages'], ['Pending Page Blacklist', 'Pending Page Retirement']),
    remapped: {
      uncorrectable: numberOf(valueAt(remap, ['Uncorrectable Error'])),
      pending: valueAt(remap, ['Pending']),
      failure: valueAt(remap, ['Remapping Failure Occurred']),
    },
    repairs: ['Channel Repair Pending', 'TPC Repair Pending', 'Unrepairable Memory'].filter(
      (k) => valueAt(node, [k]) === 'Yes',
    ),
    pcie: {
      genMax: numberOf(valueAt(gen, ['Max'])),
      genCurrent: numberOf(valueAt(gen, ['Current'])),
      widthMax: numberOf(valueAt(width, ['Max'])),
      widthCurrent: numberOf(valueAt(width, ['Current'])),
    },
    memory: {
      totalMiB: numberOf(valueAt(fb, ['Total'])),
      usedMiB: numberOf(valueAt(fb, ['Used'])),
      reservedMiB: numberOf(valueAt(fb, ['Reserved'])),
    },
  };
}

export function readSmiLog(text: string): SmiLog {
  const root = parseSmiLog(text);
  const top = (k: string) => root.children.find((c) => c.key === k)?.value;
  return {
    driver: top('Driver Version'),
    cuda: top('CUDA Version'),
    gpus: root.children.filter((c) => c.key.startsWith('GPU ')).map(gpuOf),
  };
}
