import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { potraceSvg, toPbm } from '../../../engines/potrace.js';
import { outputFile } from '../../_shared/output.js';
import type { TraceJob } from '../_shared/trace-worker.js';
import { runWorker } from '../../../core/worker.js';
import { openInput } from '../_shared/decode.js';

/** Colour tracing is quadratic-ish in the pixel count; larger images are traced at this size and scaled back in the SVG. */
const MAX_COLOR_PIXELS = 1_500_000;

export default defineTool({
  id: 'vectorize',
  section: 'image',
  group: 'format',
  summary: 'Trace a raster image into SVG paths (black-and-white or color).',
  description:
    'bw: pixels darker than threshold become ink and potrace traces them (filterSpeckle = --turdsize; pathMode spline = smooth Bézier ' +
    'curves, polygon = straight segments (alphamax 0), none = straight segments without curve optimization). color: imagetracerjs ' +
    'quantizes to 2^(colorPrecision/2) colours (2-256) and traces one layer per colour (pathMode none follows pixel edges exactly, ' +
    'polygon allows only lines, spline allows quadratic curves); shapes with fewer than filterSpeckle edge points are dropped.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    colorMode: z.enum(['bw', 'color']).default('bw').describe('Tracing mode.'),
    threshold: z.int().min(0).max(255).default(128).describe('Brightness threshold (bw).'),
    colorPrecision: z.int().min(1).max(16).default(6).describe('Color quantization precision (color).'),
    filterSpeckle: z.int().min(1).max(256).default(4).describe('Drop shapes smaller than this area in pixels.'),
    pathMode: z.enum(['none', 'polygon', 'spline']).default('spline').describe('Path smoothing.'),
  }),
  output: 'SVG file',
  examples: ['logo.png -o logo.svg', 'illustration.png --color-mode color --color-precision 8 -o art.svg'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const img = await openInput(input, ctx.workDir, ctx.signal);
    let svg: string;
    let data: Record<string, unknown>;
    if (s.colorMode === 'bw') {
      // Transparent areas count as paper (white), as a drawing on a page would.
      const { data: px, info } = await img
        .autoOrient()
        .flatten({ background: '#ffffff' })
        .greyscale()
        .raw()
        .toBuffer({ resolveWithObject: true });
      ctx.progress(20, 'tracing');
      const pbm = toPbm(info.width, info.height, (i) => px[i * info.channels]! < s.threshold);
      const traced = await potraceSvg(pbm, {
        turdsize: s.filterSpeckle,
        alphamax: s.pathMode === 'spline' ? 1 : 0,
        opticurve: s.pathMode === 'spline',
        signal: ctx.signal,
      });
      // potrace writes points (pt) at 72 dpi, i.e. one per pixel: say pixels so viewers size it 1:1.
      svg = traced
        .replace(/<!DOCTYPE[^>]*>\s*/, '')
        .replace(/(<svg[^>]*?)\swidth="([\d.]+)pt"\s+height="([\d.]+)pt"/, `$1 width="${info.width}" height="${info.height}"`);
      data = { width: info.width, height: info.height, engine: 'potrace', paths: (svg.match(/<path\b/g) ?? []).length };
    } else {
      const meta = await img.metadata();
      const rotated = (meta.orientation ?? 1) >= 5;
      const W = rotated ? meta.height! : meta.width!;
      const H = rotated ? meta.width! : meta.height!;
      const k = Math.min(1, Math.sqrt(MAX_COLOR_PIXELS / (W * H)));
      const tw = Math.max(1, Math.round(W * k));
      const th = Math.max(1, Math.round(H * k));
      const { data: px, info } = await img
        .autoOrient()
        .resize(tw, th, { fit: 'fill' })
        .ensureAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
      ctx.progress(20, 'tracing');
      const colors = Math.max(2, Math.min(256, Math.round(2 ** (s.colorPrecision / 2))));
      const job: TraceJob = {
        width: info.width,
        height: info.height,
        rgba: new Uint8Array(px.buffer, px.byteOffset, px.byteLength),
        options: {
          numberofcolors: colors,
          colorsampling: 2,
          colorquantcycles: 3,
          pathomit: s.filterSpeckle,
          ltres: s.pathMode === 'none' ? 0 : 1,
          // A negative tolerance makes every quadratic fit fail, leaving straight segments only.
          qtres: s.pathMode === 'spline' ? 1 : -1,
          rightangleenhance: s.pathMode !== 'none',
          strokewidth: 1,
          roundcoords: 2,
          viewbox: true,
          desc: false,
          blurradius: 0,
        },
      };
      const { svg: traced } = await runWorker<{ svg: string }>(
        new URL('../_shared/trace-worker.js', import.meta.url),
        job,
        ctx.signal,
        'colour tracing',
      );
      // Traced at a reduced size: the viewBox keeps the traced coordinates, width/height restore the original size.
      svg = traced.replace(
        /<svg\b[^>]*>/,
        `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${W}" height="${H}" viewBox="0 0 ${info.width} ${info.height}">`,
      );
      data = {
        width: W,
        height: H,
        engine: 'imagetracerjs',
        colors,
        tracedAt: { width: info.width, height: info.height },
        paths: (svg.match(/<path\b/g) ?? []).length,
      };
    }
    const out = ctx.out('svg');
    await writeFile(out, svg.startsWith('<?xml') ? svg : `<?xml version="1.0" encoding="UTF-8"?>\n${svg}`);
    return { outputs: [outputFile(out)], data };
  },
});
