import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { withoutUnusedAlpha } from '../../../engines/sharp.js';
import { colorSchema } from '../../_shared/color.js';
import { align, canvas, checkCanvas, loadUpright, type Loaded } from '../_shared/layout.js';
import { outputFile } from '../../_shared/output.js';
import { checkAbort } from '../_shared/cancel.js';

export default defineTool({
  id: 'stitch',
  section: 'image',
  group: 'layout',
  summary: 'Join images horizontally, vertically or in a grid.',
  description:
    'Images keep their own size. horizontal puts them in a row (height of the tallest), vertical in a column (width of the widest), ' +
    'grid in ceil(√n) columns whose widths and row heights follow the largest image in each. alignment places smaller images on the cross axis.',
  input: { kind: 'files', accept: ['image/*'], min: 2, max: 100 },
  frames: 'first',
  settings: z.object({
    direction: z.enum(['horizontal', 'vertical', 'grid']).default('horizontal').describe('Layout direction.'),
    gap: z.number().min(0).max(1000).default(0).describe('Gap between images in pixels.'),
    backgroundColor: colorSchema('#FFFFFF').describe('Background/gap color.'),
    alignment: z.enum(['start', 'center', 'end']).default('center').describe('Cross-axis alignment.'),
  }),
  output: 'PNG image',
  examples: ['left.png right.png -o both.png', 'a.jpg b.jpg c.jpg --direction vertical --gap 10 --alignment start -o column.png'],
  async run(ctx, { files }, s) {
    const imgs: Loaded[] = [];
    for (const f of files) {
      checkAbort(ctx.signal);
      imgs.push(await loadUpright(f, ctx.workDir));
    }
    ctx.progress(50, 'placing');
    const gap = Math.round(s.gap);
    const cols = s.direction === 'horizontal' ? imgs.length : s.direction === 'vertical' ? 1 : Math.ceil(Math.sqrt(imgs.length));
    const rows = Math.ceil(imgs.length / cols);
    const colW = Array.from({ length: cols }, (_, c) => Math.max(...imgs.filter((_, i) => i % cols === c).map((m) => m.width)));
    const rowH = Array.from({ length: rows }, (_, r) => Math.max(...imgs.slice(r * cols, r * cols + cols).map((m) => m.height)));
    const width = colW.reduce((a, b) => a + b, 0) + gap * (cols - 1);
    const height = rowH.reduce((a, b) => a + b, 0) + gap * (rows - 1);
    checkCanvas(width, height);
    const placed = imgs.map((m, i) => {
      const c = i % cols;
      const r = Math.floor(i / cols);
      const x0 = colW.slice(0, c).reduce((a, b) => a + b, 0) + gap * c;
      const y0 = rowH.slice(0, r).reduce((a, b) => a + b, 0) + gap * r;
      // Along the main axis images sit edge to edge; alignment acts across it (both ways in a grid).
      const dx = s.direction === 'horizontal' ? 0 : align(colW[c]!, m.width, s.alignment);
      const dy = s.direction === 'vertical' ? 0 : align(rowH[r]!, m.height, s.alignment);
      return { input: m.buffer, left: x0 + dx, top: y0 + dy };
    });
    const out = ctx.out('png', '-stitched');
    // The canvas is RGBA; an opaque background under opaque images needs no alpha channel.
    const sheet = (await canvas(width, height, s.backgroundColor)).composite(placed);
    await (await withoutUnusedAlpha(sheet)).png().toFile(out);
    return {
      outputs: [outputFile(out)],
      data: { width, height, columns: cols, rows, positions: placed.map((p) => ({ left: p.left, top: p.top })) },
    };
  },
});
