import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp, sameFormatAs, writeImage } from '../../../engines/sharp.js';
import { colorSchema, parseColor } from '../../_shared/color.js';
import { checkCanvas, loadUpright } from '../_shared/layout.js';
import { outputFile } from '../../_shared/output.js';

const RATIOS: Record<string, [number, number]> = { '16:9': [16, 9], '9:16': [9, 16], '1:1': [1, 1], '4:3': [4, 3], '3:4': [3, 4] };

export default defineTool({
  id: 'image-pad',
  section: 'image',
  group: 'layout',
  summary: 'Pad an image to a target aspect ratio with color, transparency or a blurred fill.',
  description:
    'Adds space (never crops) so the image reaches the target ratio, centred. padding adds that percentage of the image size around it ' +
    'first. The fill is a colour, transparency (PNG output) or a blurred, enlarged copy of the image.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    target: z.enum(['16:9', '9:16', '1:1', '4:3', '3:4', 'custom']).default('1:1').describe('Target aspect ratio.'),
    ratioW: z.int().min(1).max(100).default(1).describe('Custom ratio width (target custom).'),
    ratioH: z.int().min(1).max(100).default(1).describe('Custom ratio height (target custom).'),
    background: z.enum(['color', 'transparent', 'blur']).default('color').describe('Fill mode.'),
    color: colorSchema('#ffffff').describe('Fill color when background is color.'),
    padding: z.int().min(0).max(50).default(0).describe('Extra padding in percent of the image size.'),
  }),
  output: 'image in the input format (PNG when transparent)',
  examples: [
    'photo.jpg --target 9:16 --background blur -o story.jpg',
    'logo.png --target custom --ratio-w 3 --ratio-h 1 --background transparent -o banner.png',
  ],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const src = await loadUpright(input, ctx.workDir);
    const sharp = await getSharp();
    const [rw, rh] = s.target === 'custom' ? [s.ratioW, s.ratioH] : RATIOS[s.target]!;
    const minW = Math.round(src.width * (1 + (2 * s.padding) / 100));
    const minH = Math.round(src.height * (1 + (2 * s.padding) / 100));
    let W = minW;
    let H = Math.round((W * rh) / rw);
    if (H < minH) {
      H = minH;
      W = Math.round((H * rw) / rh);
    }
    checkCanvas(W, H);
    const left = Math.floor((W - src.width) / 2);
    const top = Math.floor((H - src.height) / 2);
    let base;
    if (s.background === 'blur') {
      // Enlarged to cover, darkened slightly and blurred: the usual "story" fill that keeps the colours.
      const sigma = Math.max(8, Math.round(Math.max(W, H) / 40));
      base = sharp(await sharp(src.buffer).resize(W, H, { fit: 'cover' }).blur(sigma).modulate({ brightness: 0.9 }).png().toBuffer());
    } else {
      const bg = s.background === 'transparent' ? { r: 0, g: 0, b: 0, alpha: 0 } : parseColor(s.color);
      base = sharp({ create: { width: W, height: H, channels: 4, background: bg } });
    }
    const composed = sharp(
      await base
        .composite([{ input: src.buffer, left, top }])
        .png()
        .toBuffer(),
    );
    const alpha = s.background === 'transparent' || (s.background === 'color' && parseColor(s.color).alpha < 1) || src.hasAlpha;
    let format = sameFormatAs(input.type?.ext);
    if (alpha && (format === 'jpg' || format === 'gif')) format = 'png';
    if (s.background === 'transparent') format = 'png';
    const out = ctx.out(format, '-padded');
    await writeImage(alpha ? composed : composed.flatten({ background: '#ffffff' }), out, format, {
      quality: format === 'jpg' ? 92 : undefined,
    });
    return { outputs: [outputFile(out)], data: { width: W, height: H, imageOffset: { left, top }, ratio: `${rw}:${rh}` } };
  },
});
