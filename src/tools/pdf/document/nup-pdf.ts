import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { embedPages, placePage, savePdf, visibleSize } from '../../../engines/pdf-lib.js';
import { keepEncryption, openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';
import { loadForImposition, sheetsFor, warnLostStructure } from '../_shared/structure-loss.js';

/** Columns × rows for each count (either way round; the orientation that gives larger pages wins). */
const GRIDS: Record<number, [number, number]> = { 2: [2, 1], 3: [3, 1], 4: [2, 2], 8: [4, 2], 9: [3, 3], 12: [4, 3], 16: [4, 4] };

/** Best sheet (same paper as the first page, either orientation) and grid for n pages of w×h. */
export function nupLayout(n: number, w: number, h: number): { sheetW: number; sheetH: number; cols: number; rows: number; scale: number } {
  const [a, b] = GRIDS[n]!;
  let best = { sheetW: w, sheetH: h, cols: a, rows: b, scale: 0 };
  for (const [sheetW, sheetH] of [
    [w, h],
    [h, w],
  ] as const)
    for (const [cols, rows] of [
      [a, b],
      [b, a],
    ] as const) {
      const scale = Math.min(sheetW / cols / w, sheetH / rows / h);
      if (scale > best.scale + 1e-9) best = { sheetW, sheetH, cols, rows, scale };
    }
  return best;
}

export default defineTool({
  id: 'nup-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Place several pages on each sheet (N-up).',
  description:
    'Puts perSheet pages on each sheet of the same paper size as the first page (orientation chosen to keep pages largest), left to right, top to bottom; pages stay vector.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    perSheet: z.literal([2, 3, 4, 8, 9, 12, 16]).default(2).describe('Pages per sheet.'),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['slides.pdf --per-sheet 4 -o handout.pdf'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!, { decrypt: true });
    // Filled form values, stamps and comments are annotations, outside the page content that is drawn.
    const { doc: src, before } = await loadForImposition(ctx, pdf);
    const srcPages = src.getPages();
    const first = visibleSize(srcPages[0]!);
    const L = nupLayout(s.perSheet, first.width, first.height);
    const out = await sheetsFor(src);
    const cellW = L.sheetW / L.cols;
    const cellH = L.sheetH / L.rows;
    for (let start = 0; start < srcPages.length; start += s.perSheet) {
      if (ctx.signal.aborted) break;
      const idx = srcPages.slice(start, start + s.perSheet).map((_, k) => start + k);
      const embedded = await embedPages(out, src, idx);
      const sheet = out.addPage([L.sheetW, L.sheetH]);
      for (const [k, e] of embedded.entries()) {
        const col = k % L.cols;
        const row = Math.floor(k / L.cols);
        await placePage(sheet, e, visibleSize(srcPages[idx[k]!]!).rotation, {
          x: col * cellW,
          y: L.sheetH - (row + 1) * cellH,
          w: cellW,
          h: cellH,
        });
      }
      ctx.progress((start / srcPages.length) * 90, `sheet ${start / s.perSheet + 1}`);
    }
    const file = ctx.out('pdf', `-${s.perSheet}up`);
    await savePdf(out, file);
    await warnLostStructure(ctx, before, file);
    await keepEncryption(ctx, pdf, file);
    return {
      outputs: [pdfOutput(file)],
      data: {
        perSheet: s.perSheet,
        sheets: out.getPageCount(),
        grid: `${L.cols}x${L.rows}`,
        sheetSize: [Math.round(L.sheetW), Math.round(L.sheetH)],
      },
    };
  },
});
