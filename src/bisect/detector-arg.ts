/** `--detector floorS=2,spinConfirmS=4`: the detector settings a bisection's trials are judged with. */
import { DETECTOR_MIN, type DetectorSettings } from '../lanes/lane.js';

export function parseDetector(text: string | undefined): { settings?: DetectorSettings } | { error: string } {
  if (text === undefined || text.trim() === '') return {};
  const settings: DetectorSettings = {};
  for (const part of text.split(',')) {
    const m = /^\s*(\w+)\s*=\s*([\d.]+)\s*$/.exec(part);
    const name = m?.[1] as keyof DetectorSettings | undefined;
    if (!m || !name || !(name in DETECTOR_MIN))
      return {
        error: `--detector: "${part.trim()}" is not NAME=NUMBER with NAME one of ${Object.keys(DETECTOR_MIN).join(', ')}`,
      };
    const v = Number(m[2]);
    if (!Number.isFinite(v) || v < DETECTOR_MIN[name])
      return { error: `--detector: ${name} must be a number ≥ ${DETECTOR_MIN[name]}` };
    settings[name] = v;
  }
  return { settings };
}
