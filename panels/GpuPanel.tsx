/**
 * Per GPU a used/total bar with MiB, util and temperature; torch's own allocated/reserved numbers
 * from the heartbeats; the lane's VRAM limit (marked on the bar, flagged when exceeded); the compute
 * processes.
 * When nvidia-smi is missing it says so instead of failing.
 */
import { Text } from 'ink';
import type { GpuSample } from '../src/ingest/events.js';
import type { GpuView } from '../src/session/state.js';
import { gauge, ratio } from './charts/gauge.js';
import { useClean } from './display.js';
import { formatMiB } from './format.js';
import { type PaneProps, Rows } from './Rows.js';
import { tone } from './theme.js';

export type GpuPanelProps = PaneProps & { gpu: GpuView };

/** The largest VRAM figure we know of, compared against the lane's limit. */
export function vramPeakMiB(gpu: GpuView): number | undefined {
  if (gpu.peakReservedMiB !== undefined) return gpu.peakReservedMiB;
  if (gpu.torchReservedMiB !== undefined) return gpu.torchReservedMiB;
  const used = gpu.gpus.map((g) => g.memUsedMiB);
  return used.length > 0 ? Math.max(...used) : undefined;
}

/** Bar width a GPU row gets before its details are dropped, least useful first. */
const MIN_BAR = 8;

function GpuRow({ g, width, limit, color }: { g: GpuSample; width: number; limit?: number; color: boolean }) {
  const clean = useClean();
  // Everything after the bar, most useful first; drop from the end until a usable bar fits.
  const details = [
    `${formatMiB(g.memUsedMiB)}/${formatMiB(g.memTotalMiB)} MiB`,
    g.utilPct !== undefined ? `util ${g.utilPct}%` : null,
    g.tempC !== undefined ? `${g.tempC}°C` : null,
    clean(g.name).replace(/^NVIDIA\s+/, ''),
  ].filter((d): d is string => d !== null);
  const head = `${g.index} `;
  // The gauge adds " NNN%" (5 chars) after its bar.
  const fixed = () => head.length + 5 + details.reduce((n, d) => n + d.length + 3, 0);
  while (details.length > 1 && width - fixed() < MIN_BAR) details.pop();
  const barWidth = Math.max(4, Math.min(30, width - fixed()));
  const f = ratio(g.memUsedMiB, g.memTotalMiB);
  const markAt = limit !== undefined ? limit / g.memTotalMiB : undefined;
  return (
    <Text wrap="truncate-end">
      <Text>{head}</Text>
      <Text color={tone(color, f > 0.9 ? 'bad' : f > 0.7 ? 'warn' : 'ok')}>
        {gauge(g.memUsedMiB, g.memTotalMiB, barWidth, { markAt })}
      </Text>
      <Text> · {details.join(' · ')}</Text>
    </Text>
  );
}

function TorchLine({ gpu }: { gpu: GpuView }) {
  const mib = (v: number | undefined) => (v !== undefined ? formatMiB(v) : '–');
  if (gpu.torchAllocMiB === undefined && gpu.torchReservedMiB === undefined) {
    return <Text dimColor>torch memory: no heartbeat yet</Text>;
  }
  return (
    <Text wrap="truncate-end">
      torch alloc {mib(gpu.torchAllocMiB)} / rsvd {mib(gpu.torchReservedMiB)} MiB
      {gpu.peakReservedMiB !== undefined ? (
        <Text dimColor> · peak {formatMiB(gpu.peakReservedMiB)}</Text>
      ) : null}
    </Text>
  );
}

/** The lane's limit sits in the title row, which has room to spare even in a half-width pane. */
function LimitMark({ gpu, color }: { gpu: GpuView; color: boolean }) {
  if (gpu.vramLimitMiB === undefined) return null;
  const peak = vramPeakMiB(gpu);
  const exceeded = peak !== undefined && peak > gpu.vramLimitMiB;
  return (
    <>
      <Text> · </Text>
      <Text color={tone(color, exceeded ? 'bad' : 'muted')} bold={exceeded} inverse={exceeded}>
        limit {formatMiB(gpu.vramLimitMiB)} MiB{exceeded ? ' EXCEEDED' : ''}
      </Text>
    </>
  );
}

export function GpuPanel({ gpu, width, height, color }: GpuPanelProps) {
  const clean = useClean();
  // GPU rows stop short of the torch line, which matters more than the eighth GPU's bar.
  const gpuRoom = Math.max(1, height - 2);
  return (
    <Rows width={width} height={height}>
      <Text bold wrap="truncate-end">
        GPU
        {gpu.simulated ? <Text color={tone(color, 'warn')}> (simulated)</Text> : null}
        <LimitMark gpu={gpu} color={color} />
      </Text>
      {!gpu.available ? (
        <Text color={tone(color, 'warn')} wrap="truncate-end">
          {clean(gpu.message ?? 'GPU data unavailable')}
        </Text>
      ) : null}
      {gpu.available && gpu.gpus.length === 0 ? <Text dimColor>no GPU sample yet</Text> : null}
      {gpu.available
        ? gpu.gpus
            .slice(0, gpuRoom)
            .map((g) => <GpuRow key={g.index} g={g} width={width} limit={gpu.vramLimitMiB} color={color} />)
        : null}
      <TorchLine gpu={gpu} />
      {gpu.processes.map((p) => (
        <Text key={p.pid} dimColor wrap="truncate-end">
          pid {p.pid} {clean(p.name)} {formatMiB(p.usedMiB)} MiB
        </Text>
      ))}
    </Rows>
  );
}
