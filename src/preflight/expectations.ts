/**
 * What a GPU model and its links should do: dense bf16 tensor rates from NVIDIA's datasheets, and
 * nsa-dbg's floors for a 256 MB all_reduce's bus bandwidth per link kind. A rate is stated as
 * measured/expected, so a box that is slower than its kind says how much slower.
 */

export interface ModelRate {
  /** matched against nvidia-smi's / torch's device name */
  match: RegExp;
  model: string;
  /** dense (not sparse) bf16 tensor TFLOPS */
  bf16Tflops: number;
  source: string;
}

// Most specific first: `H100 PCIe` and `H100 NVL` before the SXM part's plain `H100`.
export const MODEL_RATES: ModelRate[] = [
  { match: /H100.*PCIe/i, model: 'H100 PCIe', bf16Tflops: 756, source: 'NVIDIA H100 datasheet (PCIe)' },
  { match: /H100 NVL/i, model: 'H100 NVL', bf16Tflops: 835, source: 'NVIDIA H100 datasheet (NVL)' },
  { match: /H100/i, model: 'H100 SXM', bf16Tflops: 989, source: 'NVIDIA H100 datasheet (SXM)' },
  { match: /H200 NVL/i, model: 'H200 NVL', bf16Tflops: 835, source: 'NVIDIA H200 datasheet (NVL)' },
  { match: /H200|GH200/i, model: 'H200 SXM', bf16Tflops: 989, source: 'NVIDIA H200 datasheet (SXM)' },
  { match: /B200/i, model: 'B200', bf16Tflops: 2250, source: 'NVIDIA DGX B200 datasheet, per GPU' },
  { match: /A100/i, model: 'A100', bf16Tflops: 312, source: 'NVIDIA A100 datasheet' },
  { match: /L40S/i, model: 'L40S', bf16Tflops: 362, source: 'NVIDIA L40S datasheet' },
  { match: /\bL4\b/i, model: 'L4', bf16Tflops: 121, source: 'NVIDIA L4 datasheet' },
  { match: /A10\b/i, model: 'A10', bf16Tflops: 125, source: 'NVIDIA A10 datasheet' },
];

export function modelRate(name: string): ModelRate | undefined {
  return MODEL_RATES.find((m) => m.match.test(name));
}

/**
 * A good matmul reaches ~80 % of the datasheet's dense rate (795 of 989 TFLOPS on an H100 SXM,
 * 8192² bf16); below 60 % something holds the GPU back (clocks, power, another process).
 */
export const MATMUL_PASS_RATIO = 0.6;
export const MATMUL_FAIL_RATIO = 0.3;

export interface LinkFloor {
  link: string;
  busGBs: number;
  source: string;
}

/**
 * The floor for a 256 MB all_reduce's bus bandwidth. NVLink 4 (H100/H200): ~300 GB/s measured on
 * 2 GPUs with NCCL 2.28, 29 GB/s with NCCL_P2P_DISABLE=1 (through host memory), so half of it
 * tells the two apart. PCIe: a third of the link's x16 rate per direction.
 */
export function linkFloor(kind: {
  nvlinkActive: number;
  model?: string;
  pcieGen?: number;
  cpu: boolean;
}): LinkFloor {
  if (kind.cpu)
    return { link: 'gloo on CPU', busGBs: 0.5, source: 'nsa-dbg floor for gloo over shared memory' };
  if (kind.nvlinkActive > 0) {
    const gen4 = /H100|H200|GH200/i.test(kind.model ?? '');
    return gen4
      ? {
          link: 'NVLink 4',
          busGBs: 150,
          source: 'nsa-dbg floor: half of ~300 GB/s measured on 2×H100 NVLink',
        }
      : { link: 'NVLink', busGBs: 60, source: 'nsa-dbg floor for NVLink 3 (A100)' };
  }
  const gen = kind.pcieGen ?? 4;
  const perDir = { 3: 16, 4: 32, 5: 64 }[gen] ?? 32;
  return {
    link: `PCIe Gen ${gen}`,
    busGBs: Math.round(perDir / 3),
    source: `nsa-dbg floor: a third of PCIe Gen ${gen} x16 (${perDir} GB/s a direction)`,
  };
}

/** env flags that switch a collective transport off, and the value that does it */
export const TRANSPORT_OFF: Record<string, string> = {
  NCCL_P2P_DISABLE: '1',
  NCCL_IB_DISABLE: '1',
  NCCL_SHM_DISABLE: '1',
  NCCL_NVLS_ENABLE: '0',
  NCCL_CUMEM_ENABLE: '0',
};

/** host memory the ranks should have left, and disk for checkpoints and evidence */
export const MIN_FREE_RAM_GIB_PER_RANK = 4;
export const DISK_FAIL_GIB = 1;
export const DISK_WARN_GIB = 10;
/** another process's share of a GPU's memory that makes the GPU unfit (fail) or suspect (warn) */
export const FOREIGN_FAIL_SHARE = 0.5;
export const FOREIGN_WARN_SHARE = 0.05;
/** XIDs that mean the GPU itself is broken, not the program (NVIDIA's XID catalogue) */
export const FATAL_XIDS = new Set([48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 123]);
