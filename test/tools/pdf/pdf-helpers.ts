/** Shared fixtures and decoders for the PDF tool suites: PDFs built with pdf-lib, checked with qpdf/poppler. */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PDFDocument, StandardFonts, rgb } from '@cantoo/pdf-lib';
import type { Tool } from '../../../src/core/tool.js';
import { inputFile, runTool, type RunOutcome } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';

/** A PDF whose page i shows `texts[i]` (Helvetica 14pt near the top-left), page size `size`. */
export async function makeTextPdf(
  file: string,
  texts: string[],
  opts: { size?: [number, number]; objectStreams?: boolean; title?: string } = {},
): Promise<string> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const t of texts) {
    const page = doc.addPage(opts.size ?? [300, 400]);
    page.drawText(t, { x: 20, y: page.getHeight() - 40, size: 14, font, color: rgb(0.8, 0.1, 0.1) });
  }
  if (opts.title) doc.setTitle(opts.title);
  writeFileSync(file, await doc.save({ useObjectStreams: opts.objectStreams ?? true }));
  return file;
}

/** `n` pages "Page 1" … "Page n". */
export function numbered(n: number, prefix = 'Page'): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`);
}

export interface ToolRun extends RunOutcome {
  /** Where the output was copied (the workspace is removed after the run). */
  file?: string;
}

let seq = 0;
/** Runs a tool through runTool (validation, sniffing, engines) and keeps a copy of its output in `dir`. */
export async function runPdfTool(
  dir: string,
  id: string,
  files: string[],
  settings: Record<string, unknown> = {},
  extra: Record<string, string[]> = {},
): Promise<ToolRun> {
  const ws = await createWorkspace();
  try {
    const extraInputs = Object.fromEntries(
      await Promise.all(Object.entries(extra).map(async ([k, v]) => [k, await Promise.all(v.map((p) => inputFile(p)))] as const)),
    );
    // The tool module itself, not the whole catalog: the suite does not depend on other families' files.
    const tool = ((await import(`../../../src/tools/pdf/document/${id}.js`)) as { default: Tool }).default;
    const out = await runTool(tool, { files: await Promise.all(files.map((f) => inputFile(f))), extra: extraInputs }, settings, {
      workDir: ws.dir,
      dataDir: dir,
    });
    let file: string | undefined;
    if (out.output) {
      const d = path.join(dir, `out-${++seq}`);
      mkdirSync(d, { recursive: true });
      file = path.join(d, out.output.name);
      copyFileSync(out.output.path, file);
    }
    return { ...out, file };
  } finally {
    await ws.dispose();
  }
}

export function pageCount(file: string): number {
  return Number(execFileSync('qpdf', ['--show-npages', file]).toString().trim());
}

/** Text of every page (pdftotext, pages split on form feeds), whitespace collapsed. */
export function pageTexts(file: string, password?: string): string[] {
  const args = [...(password ? ['-upw', password] : []), '-enc', 'UTF-8', file, '-'];
  const pages = execFileSync('pdftotext', args).toString().split('\f');
  pages.pop(); // text after the last form feed
  return pages.map((p) => p.replace(/\s+/g, ' ').trim());
}

/** qpdf --json page objects (rotation, boxes). */
export function qpdfJson(file: string): {
  pages: { object: string }[];
  qpdf: [unknown, Record<string, { value?: Record<string, unknown> }>];
} {
  return JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=pages', '--json-key=qpdf', file]).toString());
}

/** Exit code and output of a command that may fail. */
export function tryRun(cmd: string, args: string[]): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString() };
  } catch (e) {
    const err = e as { status: number; stdout?: Buffer; stderr?: Buffer };
    return { code: err.status, out: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}
