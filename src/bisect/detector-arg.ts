/** `--detector floorS=2,spinConfirmS=4`: the detector settings a bisection's trials are judged with. */
import type { DetectorSettings } from '../lanes/lane.js';

const KEYS: Record<keyof DetectorSettings, number> = {
  k: 1,
  floorS: 0.1,
  firstStepS: 0.1,
  spinConfirmS: 0,
  maxStepS: 1,
};

export function parseDetector(text: string | undefined): { settings?: DetectorSettings } | { error: string } {
  if (text === undefined || text.trim() === '') return {};
  const settings: DetectorSettings = {};
  for (const part of text.split(',')) {
    const m = /^\s*(\w+)\s*=\s*([\d.]+)\s*$/.exec(part);
    const name = m?.[1] as keyof DetectorSettings | undefined;
    if (!m || !name || !(name in KEYS))
      return {
        error: `--detector: "${part.trim()}" is not NAME=NUMBER with NAME one of ${Object.keys(KEYS).join(', ')}`,
      };
    const v = Number(m[2]);
    if (!Number.isFinite(v) || v < KEYS[name])
      return { error: `--detector: ${name} must be a number ≥ ${KEYS[name]}` };
    settings[name] = v;
  }
  return { settings };
}
