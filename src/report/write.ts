import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import { markdownSection } from '../bisect/table.js';
import { readNotebook } from '../notebook/store.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import { renderMarkdown } from './markdown.js';
import { buildReport } from './model.js';
import { renderSvg } from './svg.js';

export interface ReportOptions {
  notebookFile: string;
  /** output file; '-' for stdout; default `<notebook>.report.md` (or .json) beside the notebook */
  out?: string;
  format?: 'md' | 'json';
  /** cell ids or lane names; default every cell */
  cells?: string[];
  version?: number;
}

export interface ReportOutput {
  /** the report text (also what went to stdout for '-') */
  text: string;
  /** files written */
  files: string[];
}

const stem = (f: string) => f.replace(/\.(json|md)$/i, '');

/** `to` seen from `from` when it lies inside it ("a/b.json"), else null */
function inside(from: string, to: string): string | null {
  const rel = relative(from, to);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : null;
}

/**
 * How the report names its notebook: relative when it lies beside or below the report (the two
 * travel together), else as a person would type it, `~/…` under the home folder or absolute. A
 * relative path that climbs out (`../root/.nsa-dbg/demo-notebook.json`) is right only from the one
 * folder the report was written in.
 */
export function notebookRef(reportFile: string, notebookFile: string, home = homedir()): string {
  const nb = resolve(notebookFile);
  const near = inside(dirname(resolve(reportFile)), nb);
  if (near !== null) return near;
  const inHome = home && home !== '/' ? inside(resolve(home), nb) : null;
  return inHome !== null ? `~/${inHome}` : nb;
}

/**
 * Read the notebook (no lock: writers replace it atomically, so a read sees a whole version) and
 * write the report plus, for Markdown, the SVG chart beside it, linked by a relative path.
 */
export function writeReport(o: ReportOptions): ReportOutput {
  const nb = readNotebook(o.notebookFile);
  const format = o.format ?? 'md';
  const model = buildReport(nb, {
    subject: basename(stem(o.notebookFile)),
    version: o.version,
    cells: o.cells,
  });
  if (o.cells?.length && model.rows.length === 0 && model.boxChecks.length === 0)
    throw new Error(`no cell matches ${o.cells.join(', ')} in ${o.notebookFile}`);
  const out = o.out ?? `${stem(o.notebookFile)}.report.${format}`;
  const toStdout = out === '-';
  if (!toStdout) mkdirSync(dirname(out), { recursive: true });
  const notebook = toStdout ? o.notebookFile : notebookRef(out, o.notebookFile);
  if (format === 'json') {
    const text = `${JSON.stringify({ ...model, rows: model.rows.map(({ cell, ...r }) => ({ cellId: cell.id, ...r })), cells: model.rows.map((r) => r.cell) }, null, 2)}\n`;
    if (!toStdout) writeFileAtomic(out, text);
    return { text, files: toStdout ? [] : [out] };
  }
  const bisections = (nb.bisections ?? [])
    .filter((b) => model.bisections.includes(b.id))
    .flatMap((b) => markdownSection(nb, b));
  // to stdout nothing is written: the chart is a file, so that report goes without it (writing it
  // beside the notebook would re-point an earlier report's chart at another set of cells)
  if (toStdout) return { text: renderMarkdown(model, { notebook, bisections }), files: [] };
  const svgFile = `${stem(out)}.svg`;
  const text = renderMarkdown(model, { notebook, chart: basename(svgFile), bisections });
  writeFileAtomic(
    svgFile,
    renderSvg(
      model.rows.map((r) => r.cell),
      model.title.replace(/^# /, ''),
      model.rows.map((r) => r.configuration),
    ),
  );
  writeFileAtomic(out, text);
  return { text, files: [out, svgFile] };
}
