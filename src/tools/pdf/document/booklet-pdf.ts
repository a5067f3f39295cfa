import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { embedPages, placePage, savePdf, visibleSize } from '../../../engines/pdf-lib.js';
import { keepEncryption, openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';
import { loadForImposition, sheetsFor, warnLostStructure } from '../_shared/structure-loss.js';

/**
 * Saddle-stitch imposition of n pages (padded to a multiple of 4 with blanks, shown as 0): sheet i
 * (0-based) has front [last - 2i, 1 + 2i] and back [2 + 2i, last - 1 - 2i], left and right.
 * Folding the stacked sheets in half gives pages 1..n in order.
 */
export function bookletSpreads(n: number): { total: number; spreads: [number, number][] } {
  const total = Math.ceil(n / 4) * 4;
  const page = (p: number) => (p <= n ? p : 0);
  const spreads: [number, number][] = [];
  for (let i = 0; i < total / 4; i++) {
    spreads.push([page(total - 2 * i), page(1 + 2 * i)]);
    spreads.push([page(2 + 2 * i), page(total - 1 - 2 * i)]);
  }
  return { total, spreads };
}

export default defineTool({
  id: 'booklet-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Impose pages for folding into a booklet.',
  description:
    'Saddle-stitch imposition: pages are padded with blanks to a multiple of 4 and paired so that the printed sheets, stacked and folded in half, read 1, 2, 3… ' +
    'perSheet counts pages per side of a sheet: 2 is one spread per side (print duplex, flip on the short edge); 4, 6 and 8 stack 2, 3 or 4 spreads per side ' +
    "for cut-and-stack (print duplex flipping on the long edge, cut the rows apart, put the top-row pile on the next row's, fold). Pages keep their size.",
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    perSheet: z.literal([2, 4, 6, 8]).default(2).describe('Pages per sheet side.'),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['zine.pdf -o booklet.pdf'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!, { decrypt: true });
    // Filled form values, stamps and comments are annotations, outside the page content that is drawn.
    const { doc: src, before } = await loadForImposition(ctx, pdf);
    const srcPages = src.getPages();
    const { width: W, height: H } = visibleSize(srcPages[0]!);
    const { total, spreads } = bookletSpreads(srcPages.length);
    const rows = s.perSheet / 2;
    const bookletSheets = total / 4;
    const physical = Math.ceil(bookletSheets / rows);
    const out = await sheetsFor(src);
    const used = [...new Set(spreads.flat().filter((p) => p > 0))].sort((a, b) => a - b);
    const embedded = new Map(
      (
        await embedPages(
          out,
          src,
          used.map((p) => p - 1),
        )
      ).map((e, i) => [used[i]!, e]),
    );
    const sides: number[][][] = [];
    for (let p = 0; p < physical; p++) {
      for (const face of [0, 1]) {
        const sheet = out.addPage([2 * W, rows * H]);
        const side: number[][] = [];
        for (let r = 0; r < rows; r++) {
          // Cut-and-stack: row r of physical sheet p carries booklet sheet r·physical + p.
          const b = r * physical + p;
          const spread = b < bookletSheets ? spreads[2 * b + face]! : ([0, 0] as [number, number]);
          side.push(spread);
          for (const [k, pageNo] of spread.entries()) {
            if (!pageNo) continue;
            await placePage(sheet, embedded.get(pageNo)!, visibleSize(srcPages[pageNo - 1]!).rotation, {
              x: k * W,
              y: (rows - 1 - r) * H,
              w: W,
              h: H,
            });
          }
        }
        sides.push(side);
      }
      ctx.progress(((p + 1) / physical) * 90, `sheet ${p + 1}/${physical}`);
      if (ctx.signal.aborted) break;
    }
    const file = ctx.out('pdf', '-booklet');
    await savePdf(out, file);
    await warnLostStructure(ctx, before, file);
    await keepEncryption(ctx, pdf, file);
    return {
      outputs: [pdfOutput(file)],
      data: {
        perSheet: s.perSheet,
        pages: srcPages.length,
        blanksAdded: total - srcPages.length,
        sheets: physical,
        sides: sides.length,
        order: sides,
      },
    };
  },
});
