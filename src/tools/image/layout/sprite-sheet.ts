import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { colorSchema, parseColor } from '../../_shared/color.js';
import { checkCanvas, loadUpright, type Loaded } from '../_shared/layout.js';
import { outputFile } from '../../_shared/output.js';
import { checkAbort } from '../_shared/cancel.js';

export default defineTool({
  id: 'sprite-sheet',
  section: 'image',
  group: 'layout',
  summary: 'Pack 2-64 images into a grid sprite sheet.',
  description:
    'Every image gets a cell the size of the largest one, in `columns` columns, `padding` px apart; each sits at its cell’s top-left. ' +
    'data.frames is a texture-atlas map (TexturePacker "hash" shape: frame x/y/w/h, sourceSize) keyed by input file name.',
  input: { kind: 'files', accept: ['image/*'], min: 2, max: 64 },
  frames: 'first',
  settings: z.object({
    columns: z.int().min(1).max(16).default(4).describe('Grid columns.'),
    padding: z.int().min(0).max(64).default(0).describe('Space between cells in pixels.'),
    background: colorSchema('#ffffff').describe("Background color ('transparent' allowed for PNG/WebP)."),
    format: z.enum(['png', 'webp', 'jpeg']).default('png').describe('Output format.'),
    quality: z.int().min(1).max(100).default(90).describe('Output quality (WebP/JPEG).'),
  }),
  output: 'sprite sheet image plus JSON frame coordinates',
  examples: ['icons/*.png --columns 8 --padding 2 -o sprites.png --json'],
  async run(ctx, { files }, s) {
    const imgs: Loaded[] = [];
    for (const f of files) {
      checkAbort(ctx.signal);
      imgs.push(await loadUpright(f, ctx.workDir));
    }
    const cols = Math.min(s.columns, imgs.length);
    const rows = Math.ceil(imgs.length / cols);
    const cellW = Math.max(...imgs.map((m) => m.width));
    const cellH = Math.max(...imgs.map((m) => m.height));
    const W = cols * cellW + (cols - 1) * s.padding;
    const H = rows * cellH + (rows - 1) * s.padding;
    checkCanvas(W, H);
    const frames: Record<string, unknown> = {};
    const names = new Set<string>();
    const layers = imgs.map((m, i) => {
      const x = (i % cols) * (cellW + s.padding);
      const y = Math.floor(i / cols) * (cellH + s.padding);
      let name = files[i]!.name;
      for (let k = 2; names.has(name); k++) name = `${files[i]!.name}#${k}`;
      names.add(name);
      frames[name] = {
        frame: { x, y, w: m.width, h: m.height },
        rotated: false,
        trimmed: false,
        spriteSourceSize: { x: 0, y: 0, w: m.width, h: m.height },
        sourceSize: { w: m.width, h: m.height },
        index: i,
      };
      return { input: m.buffer, left: x, top: y };
    });
    const sharp = await getSharp();
    let bg = parseColor(s.background);
    if (s.format === 'jpeg' && bg.alpha < 1) bg = { r: 255, g: 255, b: 255, alpha: 1 };
    let img = sharp({ create: { width: W, height: H, channels: 4, background: bg } }).composite(layers);
    const ext = s.format === 'jpeg' ? 'jpg' : s.format;
    if (s.format === 'jpeg')
      img = sharp(await img.png().toBuffer())
        .flatten({ background: bg })
        .jpeg({ quality: s.quality, mozjpeg: true });
    else if (s.format === 'webp') img = img.webp({ quality: s.quality });
    else img = img.png({ compressionLevel: 9 });
    const out = ctx.out(ext, '', 'sprite-sheet');
    await img.toFile(out);
    const fileName = out.split('/').pop()!;
    return {
      outputs: [outputFile(out)],
      data: {
        frames,
        meta: { image: fileName, format: 'RGBA8888', size: { w: W, h: H }, scale: '1', columns: cols, rows, cell: { w: cellW, h: cellH } },
      },
    };
  },
});
