import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { getSharp, lossyQuality, MAX_INPUT_PIXELS, normalizeFormat, writeImage } from '../../../engines/sharp.js';
import { colorSchema, parseColor } from '../../_shared/color.js';
import { outputFile } from '../../_shared/output.js';
import { MAX_SIDE, refuseOverPixelLimit } from '../_shared/pixel-limit.js';
import { safeSvg } from '../_shared/svg-input.js';

/** libvips' ceiling for svgload's dpi. */
const MAX_DENSITY = 100_000;

export default defineTool({
  id: 'svg-to-raster',
  section: 'image',
  group: 'format',
  summary: 'Render SVG/SVGZ to a raster format at a size, scale or DPI; base tool of the SVG presets.',
  description:
    'The SVG is sanitized first: scripts, foreignObject, event handlers, DOCTYPE/entities and every external reference (href, xlink:href, ' +
    'url(), @import to anything but #fragments and raster data: URIs) are removed, so rendering never reads files or the network. ' +
    'Size: width and/or height (aspect kept with one); otherwise the SVG size × dpi/72 × scale (librsvg density). dpi is also written to the output.',
  input: { kind: 'file', accept: ['.svg', '.svgz'] },
  settings: z.object({
    format: z.enum(['png', 'jpeg', 'webp', 'avif', 'tiff', 'gif', 'heif']).default('png').describe('Output format.'),
    width: z.int().min(1).max(65536).optional().describe('Target width in pixels; aspect kept when only one dimension is set.'),
    height: z.int().min(1).max(65536).optional().describe('Target height in pixels.'),
    scale: z.number().min(0.1).max(20).default(1).describe('Multiplier on the SVG intrinsic size (ignored when width/height are set).'),
    dpi: z.int().min(36).max(2400).default(300).describe('Rasterization density.'),
    background: colorSchema('#00000000').describe('Background color, 6- or 8-digit hex (transparent by default).'),
    quality: z.int().min(1).max(100).default(90).describe('Quality for lossy formats.'),
  }),
  output: 'raster image in the chosen format',
  examples: [
    'logo.svg --width 512 -o logo.png',
    'icon.svgz --format webp --scale 2 -o icon.webp',
    'chart.svg --format jpeg --background "#ffffff" --dpi 150 -o chart.jpg',
  ],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const { svg: clean, report } = await safeSvg(input);
    const sharp = await getSharp();
    const open = (density: number) =>
      sharp(clean, { density: Math.min(MAX_DENSITY, density), limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' });

    // Intrinsic size at 72 dpi (one SVG user unit = one pixel), then the density that gives the wanted size.
    let base;
    try {
      base = await open(72).metadata();
    } catch (e) {
      throw new KilnError('UNSUPPORTED_INPUT', `The SVG could not be parsed: ${(e as Error).message.split('\n')[0]}`);
    }
    const bw = base.width!;
    const bh = base.height!;
    let tw: number;
    let th: number;
    if (s.width !== undefined || s.height !== undefined) {
      tw = s.width ?? Math.max(1, Math.round((bw * s.height!) / bh));
      th = s.height ?? Math.max(1, Math.round((bh * s.width!) / bw));
    } else {
      const k = (s.dpi / 72) * s.scale;
      tw = Math.max(1, Math.round(bw * k));
      th = Math.max(1, Math.round(bh * k));
    }
    refuseOverPixelLimit({ what: 'rendered image', width: tw, height: th, maxSide: MAX_SIDE });
    // Render at the density that reaches the target directly (sharp vectors, no upscaling blur), then fit exactly.
    const density = 72 * Math.max(tw / bw, th / bh);
    ctx.progress(30, 'rendering');
    let img = open(density).resize(tw, th, { fit: 'fill' });
    const bg = parseColor(s.background);
    const format = normalizeFormat(s.format);
    if (bg.alpha > 0 || format === 'jpg') {
      // Drawn under the rendering (not flattened) so a translucent background stays translucent.
      const under = format === 'jpg' ? (bg.alpha === 0 ? { r: 255, g: 255, b: 255, alpha: 1 } : { ...bg, alpha: 1 }) : bg;
      const layer = await img.png().toBuffer();
      img = sharp({ create: { width: tw, height: th, channels: 4, background: under } }).composite([{ input: layer }]);
    }
    img = img.withMetadata({ density: s.dpi });
    const ext = format === 'jpg' ? 'jpg' : format;
    const out = ctx.out(ext);
    await writeImage(img, out, format, { quality: lossyQuality(format, s.quality) });
    return { outputs: [outputFile(out)], data: { width: tw, height: th, intrinsic: { width: bw, height: bh }, sanitized: report } };
  },
});
