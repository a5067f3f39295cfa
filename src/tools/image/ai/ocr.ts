import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { checkOcrSettings } from '../../../ai/tasks/ocr-tiers.js';
import { chooseTier, MAX_OCR_PAGES, ocrSettingsShape } from '../../ocr-shared.js';
import { openInput } from '../_shared/decode.js';

export default defineTool({
  id: 'ocr',
  section: 'image',
  group: 'ai',
  summary: 'Extract text from an image with a selectable OCR quality tier.',
  description:
    "Reads the text of an image. quality 'fast' runs the built-in tesseract (no download); 'balanced' and 'best' run PP-OCRv4 text detection " +
    'and recognition on the exact OCR runtime (kiln features install ocr): Korean, Japanese, German, French and Spanish lines found by the detector ' +
    "are recognised with tesseract's model for that language. The result has the text, blocks and lines with boxes (pixels of the input, " +
    'origin top left) and confidences 0-1, and the provenance: engine, requested and actual quality, device, provider, degraded, warnings, ' +
    'runtime generation and model digests. A multi-page TIFF is read page by page (at most 50): text holds every page, separated by a form feed line ' +
    'as in ocr-pdf, and pages[] each page with its boxes (width, height and blocks at the top are the first page). ' +
    "Korean with 'fast' (or engine tesseract) is refused before queueing: FEATURE_INCOMPATIBLE, reason fast-korean-unsupported.",
  input: { kind: 'file', accept: ['image/*'] },
  // A TIFF is read page by page; an animation's frames are not pages, so only its first is read.
  frames: (f) => f.type?.ext !== 'tiff',
  settings: z.object(ocrSettingsShape),
  check: (s) => checkOcrSettings(s),
  needs: { engines: ['tesseract'], optionalBundles: ['ocr'] },
  preflight: async (s, ctx) => {
    const { preflightOcr } = await import('../../ocr-shared.js');
    await preflightOcr('ocr', s, ctx.dataDir);
  },
  execution: 'long',
  output: 'JSON: text, confidence, blocks/lines with boxes and confidences, provenance',
  examples: ['scan.png', 'scan.png --quality balanced --language de', 'sign.jpg --quality best --language ko'],
  async run(ctx, inputs, s) {
    const { readPage, provenance } = await import('../../../ai/tasks/ocr.js');
    const file = inputs.files[0]!;
    // A multi-page TIFF (a scan, a fax) is read page by page, as tesseract does; only its first
    // page was read before and the others were dropped without a word.
    const count = file.type?.ext === 'tiff' ? ((await (await openInput(file, ctx.workDir, ctx.signal)).metadata()).pages ?? 1) : 1;
    if (count > MAX_OCR_PAGES)
      throw new KilnError(
        'LIMIT_EXCEEDED',
        `ocr reads at most ${MAX_OCR_PAGES} pages per request; this TIFF has ${count}. Turn it into a PDF (kiln tiff-to-pdf) and read pages of it with ocr-pdf --pages 1-50.`,
        { reason: 'too-many-pages' },
      );
    const chosen = await chooseTier('ocr', s, ctx.dataDir);
    try {
      ctx.progress(5, chosen.quality);
      const pages = [];
      for (let i = 0; i < count; i++) {
        ctx.signal.throwIfAborted();
        const img = (await openInput(file, ctx.workDir, ctx.signal, count > 1 ? { page: i } : {})).rotate();
        const r = await readPage(img, {
          quality: chosen.quality,
          language: s.language,
          enhance: s.enhance,
          lease: chosen.lease,
          workDir: ctx.workDir,
          signal: ctx.signal,
          progress: (f, stage) => ctx.progress(5 + (90 * (i + f)) / count, count > 1 ? `page ${i + 1}/${count}` : stage),
        });
        pages.push({
          page: i + 1,
          text: r.page.text,
          confidence: r.page.confidence,
          width: r.page.width,
          height: r.page.height,
          blocks: r.page.blocks,
          enhance: r.enhance,
          ...(r.orientation && { orientation: r.orientation }),
          ms: r.ms,
        });
      }
      const first = pages[0]!;
      return {
        outputs: [],
        data: {
          // Several pages: the text of all, separated as ocr-pdf does; the first page's fields as before, every page in `pages`.
          text: pages.map((p) => p.text).join('\n\f\n'),
          confidence: count > 1 ? pages.reduce((n, p) => n + p.confidence, 0) / count : first.confidence,
          width: first.width,
          height: first.height,
          blocks: first.blocks,
          enhance: first.enhance,
          ...(first.orientation && { orientation: first.orientation }),
          ms: pages.reduce((n, p) => n + p.ms, 0),
          ...(count > 1 && { pageCount: count, pages }),
          provenance: await provenance({ ...chosen, language: s.language }),
        },
      };
    } finally {
      await chosen.lease?.release();
    }
  },
});
