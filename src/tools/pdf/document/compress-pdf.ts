import { copyFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { compressionParams, pdfwrite } from '../../../engines/ghostscript.js';
import { keepEncryption, openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';
import { warnLostStructure } from '../_shared/structure-loss.js';
import { readStructure } from '../../../engines/qpdf-structure.js';

/** Qualities tried in targetSize mode, strongest last; each is one Ghostscript pass. */
const TARGET_LADDER = [75, 50, 30, 15, 5, 1];

export default defineTool({
  id: 'compress-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Shrink a PDF by quality level or toward a target size.',
  description:
    'Ghostscript rewrites the PDF with images downsampled (50-300 dpi) and re-encoded as JPEG by quality, fonts subset and duplicate images merged. ' +
    'mode targetSize tries quality 75, 50, 30, 15, 5, 1 until the file is at or under targetSizeKb; data.targetMet says whether any got there. ' +
    'If compression would grow the file, the original is returned.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    mode: z.enum(['quality', 'targetSize']).default('quality').describe('Compression mode.'),
    quality: z.int().min(1).max(100).default(75).describe('Higher = less compression.'),
    targetSizeKb: z.number().positive().optional().describe('Target size in KB (mode targetSize).'),
  }),
  check: (s) => {
    if (s.mode === 'targetSize' && s.targetSizeKb === undefined) return 'compress-pdf mode targetSize needs targetSizeKb.';
  },
  implies: { targetSizeKb: { mode: 'targetSize' } },
  needs: { engines: ['qpdf', 'ghostscript'] },
  output: 'PDF',
  examples: ['scan.pdf --quality 40 -o small.pdf', 'scan.pdf --mode targetSize --target-size-kb 500 -o small.pdf'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const pdf = await openPdf(ctx, input, { decrypt: true });
    const originalSize = input.size;
    const out = ctx.out('pdf', '-compressed');
    const trial = path.join(ctx.workDir, 'trial.pdf');
    const ladder = s.mode === 'quality' ? [s.quality] : TARGET_LADDER;
    const target = s.mode === 'targetSize' ? Math.round(s.targetSizeKb! * 1024) : undefined;
    const attempts: { quality: number; size: number }[] = [];
    let best: { quality: number; size: number } | undefined;
    for (const [i, q] of ladder.entries()) {
      const { params, post } = compressionParams(q);
      await pdfwrite(pdf.path, trial, params, {
        post,
        signal: ctx.signal,
        name: input.name,
        onPage: (p) => ctx.progress(((i + p / pdf.pages) / ladder.length) * 95, `quality ${q}, page ${p}/${pdf.pages}`),
      });
      const size = (await stat(trial)).size;
      attempts.push({ quality: q, size });
      if (!best || size < best.size) {
        best = { quality: q, size };
        await rename(trial, out);
      }
      if (target !== undefined && size <= target) break;
    }
    await rm(trial, { force: true });
    let usedOriginal = false;
    if (best!.size >= originalSize) {
      // Rewriting only made it bigger (already optimised): the original is the better answer.
      await copyFile(input.path, out);
      usedOriginal = true;
    } else {
      await warnLostStructure(ctx, await readStructure(pdf.path, { signal: ctx.signal }), out);
      await keepEncryption(ctx, pdf, out);
    }
    const processedSize = (await stat(out)).size;
    return {
      outputs: [pdfOutput(out)],
      data: {
        mode: s.mode,
        originalSize,
        processedSize,
        savedPercent: Math.round((1 - processedSize / originalSize) * 1000) / 10,
        quality: usedOriginal ? null : best!.quality,
        usedOriginal,
        ...(target !== undefined ? { targetSize: target, targetMet: processedSize <= target } : {}),
        attempts,
      },
    };
  },
});
