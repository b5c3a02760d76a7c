/**
 * The final metrics JSON a trainer pretty-prints over several lines (`{`, `  "steps": 10,`, …, `}`),
 * gathered line by line.
 */
import { parsePythonJson } from './python-json.js';

const METRICS_LINE = /^\s+"[^"]*": /;
const MAX_METRICS_LINES = 200;

export class MetricsBlock {
  private readonly lines = ['{'];

  /**
   * The next line: `'more'` (it belongs, go on), the metrics (the closing `}`), `'unreadable'` (it
   * closed but is no JSON object) or `'not-mine'` (a lone `{` in other output, a cut-off write: the
   * line is read on its own).
   */
  feed(line: string): 'more' | 'unreadable' | 'not-mine' | Record<string, unknown> {
    if (line.trimEnd() === '}') {
      this.lines.push('}');
      try {
        const metrics = parsePythonJson(this.lines.join('\n'));
        if (metrics !== null && typeof metrics === 'object' && !Array.isArray(metrics))
          return metrics as Record<string, unknown>;
      } catch {
        // counted as unreadable
      }
      return 'unreadable';
    }
    if (METRICS_LINE.test(line) && this.lines.length < MAX_METRICS_LINES) {
      this.lines.push(line);
      return 'more';
    }
    return 'not-mine';
  }
}
