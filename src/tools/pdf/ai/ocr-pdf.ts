import path from 'node:path';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { checkOcrSettings } from '../../../ai/tasks/ocr-tiers.js';
import { chooseTier, MAX_OCR_PAGES, ocrSettingsShape } from '../../ocr-shared.js';
import { keepEncryption, openPdf, PDF_ACCEPT, pdfOutput } from '../_shared/pdf-input.js';

/** Pages are rasterized at 300 dpi: what tesseract and the detector read best. */
const DPI = 300;

/** 'all' | 'N-M' | 'N,M,…' (ranges may appear in lists) → sorted 1-based page numbers; `total` undefined checks only the syntax. */
export function selectPages(spec: string, total?: number): number[] | 'all' {
  const s = spec.trim().toLowerCase();
  if (s === 'all' || s === '') {
    if (total === undefined) return 'all';
    if (total > MAX_OCR_PAGES) throw tooMany(total);
    return Array.from({ length: total }, (_, i) => i + 1);
  }
  const out = new Set<number>();
  for (const part of s.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m)
      throw new KilnError('VALIDATION_ERROR', `pages: "${spec}" is not 'all', a range such as 1-3 or a list such as 1,3,5.`, {
        details: [{ path: 'pages', message: 'bad page selection' }],
      });
    const a = Number(m[1]);
    const b = m[2] ? Number(m[2]) : a;
    if (a < 1 || b < a)
      throw new KilnError('VALIDATION_ERROR', `pages: ${part.trim()} is not a valid range (pages count from 1).`, {
        details: [{ path: 'pages', message: 'bad range' }],
      });
    if (b - a + 1 > MAX_OCR_PAGES || out.size > MAX_OCR_PAGES) throw tooMany(b - a + 1 + out.size);
    for (let p = a; p <= b; p++) {
      if (total !== undefined && p > total)
        throw new KilnError('VALIDATION_ERROR', `pages: page ${p} does not exist; the PDF has ${total} page${total === 1 ? '' : 's'}.`, {
          details: [{ path: 'pages', message: 'page out of range' }],
        });
      out.add(p);
    }
  }
  if (out.size > MAX_OCR_PAGES) throw tooMany(out.size);
  return [...out].sort((x, y) => x - y);
}

function tooMany(n: number): KilnError {
  return new KilnError(
    'LIMIT_EXCEEDED',
    `ocr-pdf reads at most ${MAX_OCR_PAGES} pages per request; ${n} are selected. Select fewer with pages (e.g. 1-50).`,
    {
      reason: 'too-many-pages',
      details: [{ path: 'pages', message: `at most ${MAX_OCR_PAGES} pages` }],
    },
  );
}

export default defineTool({
  id: 'ocr-pdf',
  section: 'pdf',
  group: 'ai',
  summary: 'Rasterize PDF pages and extract their text with a selectable OCR tier.',
  description:
    'Renders each selected page at 300 dpi (poppler), reads it as the ocr tool does, and writes a searchable PDF: the original pages, untouched, ' +
    'with an invisible text layer placed over the words it read (selectable and searchable; pdftotext extracts it). The result data has the text ' +
    'per page with blocks and lines (boxes in points, origin top left of the displayed page) and the provenance. At most 50 pages per request (more is refused before queueing).',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    ...ocrSettingsShape,
    pages: z
      .string()
      .default('all')
      .describe("Pages to read: 'all', a range such as '1-3', or a list such as '1,3,5'; at most 50 pages per request."),
  }),
  check: (s) => {
    checkOcrSettings(s);
    selectPages(s.pages);
  },
  needs: { engines: ['tesseract', 'poppler', 'qpdf'], optionalBundles: ['ocr'] },
  preflight: async (s, ctx) => {
    const { preflightOcr } = await import('../../ocr-shared.js');
    await preflightOcr('ocr-pdf', s, ctx.dataDir);
    const file = ctx.inputs.files[0];
    if (!file) return;
    const { inspectPdf } = await import('../../../engines/qpdf.js');
    const info = await inspectPdf(file.path, file.name).catch(() => undefined);
    if (info) selectPages(s.pages, info.pages);
  },
  execution: 'long',
  output: 'PDF (the input with a searchable text layer); data: text per page, blocks/lines, provenance',
  examples: ['scan.pdf', 'scan.pdf --pages 1-3 --quality balanced', 'report.pdf --language de --quality fast'],
  async run(ctx, inputs, s) {
    const { readPage, provenance } = await import('../../../ai/tasks/ocr.js');
    const { pageBoxes, renderPage } = await import('../../../engines/poppler.js');
    const { getSharp } = await import('../../../engines/sharp.js');
    const { loadPdf, savePdf } = await import('../../../engines/pdf-lib.js');
    const { addTextLayer, glyphlessFont } = await import('../_shared/text-layer.js');
    const pdf = await openPdf(ctx, inputs.files[0]!, { decrypt: true });
    const pages = selectPages(s.pages, pdf.pages) as number[];
    const chosen = await chooseTier('ocr-pdf', s, ctx.dataDir);
    try {
      const sharp = await getSharp();
      const doc = await loadPdf(pdf.path, pdf.name, pdf.pages);
      const font = await glyphlessFont(doc);
      const results = [];
      for (const [i, n] of pages.entries()) {
        ctx.signal.throwIfAborted();
        const share = (f: number) => ctx.progress(5 + (90 * (i + f)) / pages.length, `page ${n} (${i + 1}/${pages.length})`);
        share(0);
        const [box] = await pageBoxes(pdf.path, n, n, ctx.signal);
        const png = await renderPage(pdf.path, n, DPI, path.join(ctx.workDir, `page-${n}`), ctx.signal);
        const r = await readPage(sharp(png), {
          quality: chosen.quality,
          language: s.language,
          enhance: s.enhance,
          lease: chosen.lease,
          workDir: ctx.workDir,
          signal: ctx.signal,
          progress: (f) => share(f * 0.95),
        });
        // Pixels → points of the displayed page (the render is of the crop box, rotation applied).
        const k = box ? box.width / r.page.width : 72 / DPI;
        const pt = (b: { x: number; y: number; width: number; height: number }) => ({
          x: Math.round(b.x * k * 100) / 100,
          y: Math.round(b.y * k * 100) / 100,
          width: Math.round(b.width * k * 100) / 100,
          height: Math.round(b.height * k * 100) / 100,
        });
        const blocks = r.page.blocks.map((b) => ({
          ...b,
          box: pt(b.box),
          lines: b.lines.map((l) => ({ ...l, box: pt(l.box), ...(l.words && { words: l.words.map((w) => ({ ...w, box: pt(w.box) })) }) })),
        }));
        const layer = blocks.flatMap((b) =>
          b.lines.map((l) => ({
            text: l.text,
            ...l.box,
            angle: l.angle,
            words: l.words?.map((w) => ({ text: w.text, ...w.box })),
          })),
        );
        await addTextLayer(doc, n - 1, font, layer);
        results.push({
          page: n,
          text: r.page.text,
          confidence: r.page.confidence,
          width: box?.width,
          height: box?.height,
          blocks,
          enhance: r.enhance,
          ...(r.orientation && { orientation: r.orientation }),
          ms: r.ms,
        });
      }
      const out = ctx.out('pdf', '-ocr');
      await savePdf(doc, out);
      // Read from a decrypted copy: an owner-restricted scan keeps its restrictions (and passwords).
      await keepEncryption(ctx, pdf, out);
      return {
        outputs: [pdfOutput(out)],
        data: {
          text: results.map((p) => p.text).join('\n\f\n'),
          pageCount: pdf.pages,
          pages: results,
          provenance: await provenance({ ...chosen, language: s.language }),
        },
      };
    } finally {
      await chosen.lease?.release();
    }
  },
});
