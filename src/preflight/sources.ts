/**
 * The probe's other raw sources, parsed: compute apps and the PCIe query (nvidia-smi CSV),
 * `nvidia-smi nvlink -s`, `df -Pk`, /proc/meminfo, /proc/self/status and the kernel log's XIDs.
 * Each is pure, so each is tested on captured real output.
 */

/** a number nvidia-smi printed (`81559`, `4`), undefined for `[N/A]` and the like */
export function numberOf(s: string | undefined): number | undefined {
  const v = Number.parseFloat(s ?? '');
  return Number.isFinite(v) ? v : undefined;
}

export interface ComputeApp {
  gpuUuid: string;
  pid: number;
  name: string;
  usedMiB?: number;
}

/** `--query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits` */
export function parseComputeApps(text: string): ComputeApp[] {
  return text.split('\n').flatMap((line) => {
    const parts = line.split(',').map((p) => p.trim());
    const pid = Number(parts[1]);
    if (parts.length < 4 || !Number.isInteger(pid) || pid <= 0) return [];
    const used = numberOf(parts[parts.length - 1]);
    // a process path may itself hold commas
    const name = parts.slice(2, -1).join(',');
    return [{ gpuUuid: parts[0]!, pid, name, ...(used !== undefined ? { usedMiB: used } : {}) }];
  });
}

export interface PcieLink {
  index: number;
  genCurrent?: number;
  genMax?: number;
  widthCurrent?: number;
  widthMax?: number;
}

/** `--query-gpu=index,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max` */
export function parsePcieQuery(text: string): PcieLink[] {
  return text
    .split('\n')
    .map((l) => l.split(',').map((p) => p.trim()))
    .filter((p) => p.length === 5 && /^\d+$/.test(p[0]!))
    .map((p) => ({
      index: Number(p[0]),
      genCurrent: numberOf(p[1]),
      genMax: numberOf(p[2]),
      widthCurrent: numberOf(p[3]),
      widthMax: numberOf(p[4]),
    }));
}

export interface NvlinkGpu {
  index: number;
  /** link number → GB/s, null when inactive */
  links: Array<number | null>;
}

/** `nvidia-smi nvlink -s`: `GPU 0: … (UUID: …)` then `Link N: 26.562 GB/s` or `Link N: <inactive>` */
export function parseNvlinkStatus(text: string): NvlinkGpu[] {
  const out: NvlinkGpu[] = [];
  for (const line of text.split('\n')) {
    const g = /^GPU (\d+):/.exec(line.trim());
    if (g) {
      out.push({ index: Number(g[1]), links: [] });
      continue;
    }
    const l = /^Link (\d+):\s*(.*)$/.exec(line.trim());
    if (l && out.length) {
      const speed = /([\d.]+)\s*GB\/s/.exec(l[2]!);
      out[out.length - 1]!.links[Number(l[1])] = speed ? Number(speed[1]) : null;
    }
  }
  return out;
}

export interface DfRow {
  filesystem: string;
  totalKiB: number;
  availKiB: number;
  mount: string;
}

/** `df -Pk DIR`: the POSIX format, one row after the header (a long device name stays on it) */
export function parseDf(text: string): DfRow | null {
  const rows = text.split('\n').filter((l) => l.trim() !== '');
  const m = /^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+%\s+(.+)$/.exec(rows[1]?.trim() ?? '');
  if (!m) return null;
  return { filesystem: m[1]!, totalKiB: Number(m[2]), availKiB: Number(m[4]), mount: m[5]! };
}

/** /proc/meminfo's `Key: N kB` lines, in KiB */
export function parseMeminfo(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^(\w+(?:\(\w+\))?):\s+(\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

/** CAP_SYS_PTRACE (bit 19) in /proc/self/status's effective set */
export function hasPtraceCapability(status: string): boolean | undefined {
  const m = /^CapEff:\s*([0-9a-f]+)/im.exec(status);
  if (!m) return undefined;
  return ((BigInt(`0x${m[1]}`) >> 19n) & 1n) === 1n;
}

export interface Xid {
  pci: string;
  code: number;
  line: string;
}

/** `NVRM: Xid (PCI:0000:04:00): 79, pid=…, GPU has fallen off the bus.` lines of the kernel log */
export function parseXids(text: string): Xid[] {
  return text.split('\n').flatMap((line) => {
    const m = /NVRM: Xid \(PCI:([^)]*)\): (\d+)/.exec(line);
    return m ? [{ pci: m[1]!, code: Number(m[2]), line: line.trim() }] : [];
  });
}
