import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { checkOcrSettings } from '../../../ai/tasks/ocr-tiers.js';
import { chooseTier, ocrSettingsShape } from '../../ocr-shared.js';
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
    "runtime generation and model digests. Korean with 'fast' (or engine tesseract) is refused before queueing: FEATURE_INCOMPATIBLE, reason fast-korean-unsupported.",
  input: { kind: 'file', accept: ['image/*'] },
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
    const chosen = await chooseTier('ocr', s, ctx.dataDir);
    try {
      ctx.progress(5, chosen.quality);
      const img = (await openInput(inputs.files[0]!, ctx.workDir, ctx.signal)).rotate();
      const r = await readPage(img, {
        quality: chosen.quality,
        language: s.language,
        enhance: s.enhance,
        lease: chosen.lease,
        workDir: ctx.workDir,
        signal: ctx.signal,
        progress: (f, stage) => ctx.progress(5 + 90 * f, stage),
      });
      return {
        outputs: [],
        data: {
          text: r.page.text,
          confidence: r.page.confidence,
          width: r.page.width,
          height: r.page.height,
          blocks: r.page.blocks,
          enhance: r.enhance,
          ms: r.ms,
          provenance: await provenance({ ...chosen, language: s.language }),
        },
      };
    } finally {
      await chosen.lease?.release();
    }
  },
});
