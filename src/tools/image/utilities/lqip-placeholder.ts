import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';

export default defineTool({
  id: 'lqip-placeholder',
  section: 'image',
  group: 'utilities',
  summary: 'Make a tiny low-quality image placeholder (blurred, pixelated or solid).',
  description:
    'Scales the image to a few pixels wide (aspect kept) and either blurs it, pixelates it into visible blocks, or fills it with the ' +
    'average colour. Returns the tiny image and its data URI (data.dataUri) for inlining in HTML or CSS.',
  input: { kind: 'file', accept: ['image/*'] },
  derivedOutput: true,
  frames: 'first',
  settings: z.object({
    width: z.int().min(4).max(64).default(16).describe('Placeholder width in pixels.'),
    blur: z.number().min(0).max(20).default(2).describe('Blur radius (strategy blur).'),
    strategy: z.enum(['blur', 'pixelate', 'solid']).default('blur').describe('Placeholder strategy.'),
    format: z.enum(['webp', 'png', 'jpeg']).default('webp').describe('Output format.'),
    quality: z.int().min(1).max(100).default(50).describe('Output quality.'),
  }),
  output: 'tiny image plus JSON data with its data URI',
  examples: ['hero.jpg --width 20 --json', 'hero.jpg --strategy solid --format png -o hero-lqip.png'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const sharp = await getSharp();
    const src = await openInput(input, ctx.workDir, ctx.signal);
    const meta = await src.metadata();
    const rotated = (meta.orientation ?? 1) >= 5;
    const sw = rotated ? meta.height! : meta.width!;
    const sh = rotated ? meta.width! : meta.height!;
    const width = s.width;
    const height = Math.max(1, Math.round((sh * width) / sw));
    const hasAlpha = !!meta.hasAlpha && s.format !== 'jpeg';
    let img;
    if (s.strategy === 'solid') {
      const stats = await (await openInput(input, ctx.workDir, ctx.signal)).stats();
      const [r, g, b, a] = stats.channels.map((c) => Math.round(c.mean));
      const color = stats.channels.length >= 3 ? { r: r!, g: g!, b: b! } : { r: r!, g: r!, b: r! };
      const alpha = hasAlpha && stats.channels.length === 4 ? a! / 255 : 1;
      img = sharp({ create: { width, height, channels: 4, background: { ...color, alpha } } });
    } else if (s.strategy === 'pixelate') {
      // Average over blocks of about a quarter of the width, then enlarge without smoothing.
      const blocksX = Math.max(2, Math.round(width / 4));
      const blocksY = Math.max(1, Math.round((blocksX * sh) / sw));
      const small = await src.autoOrient().resize(blocksX, blocksY, { fit: 'fill', kernel: 'cubic' }).png().toBuffer();
      img = sharp(small).resize(width, height, { fit: 'fill', kernel: 'nearest' });
    } else {
      img = src.autoOrient().resize(width, height, { fit: 'fill' });
      // sharp's blur needs sigma ≥ 0.3; below that the image is left sharp.
      if (s.blur >= 0.3) img = sharp(await img.png().toBuffer()).blur(s.blur);
    }
    if (!hasAlpha) img = img.flatten({ background: '#ffffff' });
    const ext = s.format === 'jpeg' ? 'jpg' : s.format;
    if (s.format === 'webp') img = img.webp({ quality: s.quality });
    else if (s.format === 'jpeg') img = img.jpeg({ quality: s.quality });
    else img = img.png({ compressionLevel: 9, ...(s.quality < 100 ? { palette: true, quality: s.quality } : {}) });
    const out = ctx.out(ext, '-lqip');
    await writeFile(out, await img.toBuffer());
    const bytes = await readFile(out);
    const mime = s.format === 'jpeg' ? 'image/jpeg' : `image/${s.format}`;
    return {
      outputs: [outputFile(out)],
      data: {
        dataUri: `data:${mime};base64,${bytes.toString('base64')}`,
        width,
        height,
        bytes: bytes.length,
        strategy: s.strategy,
        format: s.format,
      },
    };
  },
});
