import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { withoutUnusedAlpha } from '../../../engines/sharp.js';
import { colorSchema } from '../../_shared/color.js';
import { COLLAGE_TEMPLATE_IDS, COLLAGE_TEMPLATES, layoutTemplate } from '../_shared/collage-templates.js';
import { canvas, checkCanvas, coverTile, loadUpright } from '../_shared/layout.js';
import { outputFile } from '../../_shared/output.js';
import { checkAbort } from '../_shared/cancel.js';

export default defineTool({
  id: 'collage',
  section: 'image',
  group: 'layout',
  summary: 'Arrange several images in a grid/collage template.',
  description:
    `Templates (the leading digit is the number of images): ${COLLAGE_TEMPLATE_IDS.join(', ')}. ` +
    'Each image fills its cell (centre crop). gap is the space between cells and around the edge; backgroundColor may be "transparent". ' +
    'Fewer images than the template has cells is an error; extra images are ignored (data.ignored).',
  input: { kind: 'files', accept: ['image/*'], min: 1, max: 9 },
  frames: 'first',
  settings: z.object({
    template: z.string().describe(`Layout id: ${COLLAGE_TEMPLATE_IDS.join(', ')}.`),
    gap: z.number().min(0).max(500).default(8).describe('Gap between cells in pixels.'),
    backgroundColor: colorSchema('#FFFFFF').describe("Canvas color or 'transparent'."),
    borderRadius: z.number().min(0).max(500).default(0).describe('Corner radius of each cell in pixels.'),
  }),
  check: (s) => {
    if (!COLLAGE_TEMPLATES[s.template]) return `Unknown collage template "${s.template}". Known: ${COLLAGE_TEMPLATE_IDS.join(', ')}.`;
  },
  output: 'PNG image',
  examples: [
    'a.jpg b.jpg c.jpg d.jpg --template 4-grid -o collage.png',
    'a.jpg b.jpg c.jpg --template 3-left-large --gap 16 --border-radius 12 -o c.png',
  ],
  async run(ctx, { files }, s) {
    const t = COLLAGE_TEMPLATES[s.template]!;
    if (files.length < t.cells.length) {
      throw new KilnError(
        'VALIDATION_ERROR',
        `Template ${s.template} has ${t.cells.length} cells but ${files.length} image${files.length === 1 ? '' : 's'} were given.`,
        {
          details: [{ path: 'template', message: `needs ${t.cells.length} images` }],
        },
      );
    }
    const gap = Math.round(s.gap);
    const layout = layoutTemplate(t, gap);
    checkCanvas(layout.width, layout.height);
    const tiles = [];
    for (let i = 0; i < t.cells.length; i++) {
      checkAbort(ctx.signal);
      const cell = layout.cells[i]!;
      const src = await loadUpright(files[i]!, ctx.workDir);
      tiles.push({ input: await coverTile(src.buffer, cell.width, cell.height, s.borderRadius), left: cell.left, top: cell.top });
      ctx.progress((80 * (i + 1)) / t.cells.length, `image ${i + 1}/${t.cells.length}`);
    }
    const out = ctx.out('png', '-collage');
    // The canvas is RGBA; an opaque background under opaque tiles needs no alpha channel.
    const sheet = (await canvas(layout.width, layout.height, s.backgroundColor)).composite(tiles);
    await (await withoutUnusedAlpha(sheet)).png().toFile(out);
    return {
      outputs: [outputFile(out)],
      data: {
        template: s.template,
        width: layout.width,
        height: layout.height,
        cells: layout.cells,
        ignored: files.length - t.cells.length,
      },
    };
  },
});
