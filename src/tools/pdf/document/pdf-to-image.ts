import { rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { pageBoxes, renderPages } from '../../../engines/poppler.js';
import { resolveRange } from '../../../engines/qpdf.js';
import { IMAGE_FORMATS, MAX_INPUT_PIXELS, openImage, writeImage } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { refuseOverPixelLimit } from '../../image/_shared/pixel-limit.js';
import { openPdf, PDF_ACCEPT } from '../_shared/pdf-input.js';

const LOSSY = new Set(['jpg', 'webp', 'avif', 'heic', 'heif', 'jxl']);

/**
 * Pages one pdftoppm renders at most: it parses the document once per run (a page a run took 12 s for
 * 300 small pages, 1.5 s in runs), and a run's PNGs wait on disk until they are encoded.
 */
const RUN_PAGES = 20;

/** The pages, in the order asked, as runs [from, to] of ascending consecutive pages, each at most `max` long. */
export function consecutiveRuns(pages: number[], max: number): [number, number][] {
  const runs: [number, number][] = [];
  for (const p of pages) {
    const last = runs.at(-1);
    if (last && p === last[1] + 1 && p - last[0] < max) last[1] = p;
    else runs.push([p, p]);
  }
  return runs;
}

export default defineTool({
  id: 'pdf-to-image',
  section: 'pdf',
  group: 'document',
  summary: 'Render PDF pages to images; base tool of the PDF-to-image presets.',
  description:
    'poppler renders each selected page at dpi, then sharp encodes it in format (quality for lossy formats). pages is all, a page, a range or a list ' +
    '(qpdf syntax: 1-3,z, r1). One page gives one image; several come back as a ZIP. A page that would exceed the pixel limit (KILN_MAX_PIXELS) at that dpi is refused.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    pages: z.string().max(2000).default('all').describe("Pages to render: 'all', '3', '1-3' or '1,3,5' (qpdf syntax, z = last page)."),
    format: z.enum(IMAGE_FORMATS).default('png').describe('Image format.'),
    dpi: z.int().min(36).max(2400).default(150).describe('Render resolution in dots per inch.'),
    quality: z.int().min(1).max(100).default(85).describe('Quality for lossy formats.'),
  }),
  needs: { engines: ['qpdf', 'poppler'] },
  output: 'image, or ZIP of images for several pages',
  examples: ['doc.pdf --pages 1 --format jpg -o cover.jpg', 'doc.pdf --dpi 300 -o pages.zip'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!);
    const spec = s.pages.trim().toLowerCase() === 'all' ? '' : s.pages;
    const pages = [...new Set(resolveRange(spec, pdf.pages, 'pages'))];
    const first = Math.min(...pages);
    const last = Math.max(...pages);
    const boxes = new Map((await pageBoxes(pdf.path, first, last, ctx.signal)).map((b) => [b.page, b]));
    // Refuse before rendering anything: dpi 2400 on an A0 page is gigapixels.
    for (const p of pages) {
      const b = boxes.get(p);
      if (!b) throw new KilnError('UNSUPPORTED_INPUT', `Page ${p} has no readable size.`);
      const maxDpi = Math.floor(72 * Math.sqrt(MAX_INPUT_PIXELS / (b.width * b.height)));
      refuseOverPixelLimit({
        what: `rendering of page ${p} at ${s.dpi} dpi`,
        width: Math.ceil((b.width * s.dpi) / 72),
        height: Math.ceil((b.height * s.dpi) / 72),
        hint: `Use dpi ${maxDpi} or less.`,
        details: [{ path: 'dpi', message: `at most ${maxDpi} for page ${p}` }],
      });
    }
    const outputs = [];
    const single = pages.length === 1;
    let done = 0;
    for (const [from, to] of consecutiveRuns(pages, RUN_PAGES)) {
      ctx.progress((done / pages.length) * 95, `pages ${from}–${to} (${done + 1}/${pages.length})`);
      for (const { page, png } of await renderPages(pdf.path, from, to, s.dpi, path.join(ctx.workDir, `render-${from}`), ctx.signal)) {
        const out = ctx.out(s.format, single ? '' : `-page-${String(page).padStart(String(pdf.pages).length, '0')}`);
        await writeImage(await openImage(png), out, s.format, { quality: LOSSY.has(s.format) ? s.quality : undefined });
        await rm(png, { force: true });
        outputs.push(outputFile(out));
        done++;
      }
    }
    return { outputs, data: { pages, dpi: s.dpi, format: s.format } };
  },
});
