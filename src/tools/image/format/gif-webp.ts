import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { decodeAnimation, joinAnimation, mapFrames } from '../_shared/animation.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'gif-webp',
  section: 'image',
  group: 'format',
  summary: 'Convert animated GIF to animated WebP and back.',
  description:
    'GIF input becomes an animated WebP (quality, or lossless); WebP input becomes a GIF. Every frame, its delay and the loop count are kept; ' +
    'resizePercent scales the whole animation.',
  input: { kind: 'file', accept: ['.gif', '.webp'] },
  settings: z.object({
    quality: z.int().min(1).max(100).default(80).describe('WebP quality.'),
    lossless: z.boolean().default(false).describe('Lossless WebP.'),
    resizePercent: z.int().min(10).max(100).default(100).describe('Scale the animation (percent).'),
  }),
  output: 'animated WebP (from GIF) or GIF (from WebP)',
  examples: ['anim.gif -o anim.webp', 'anim.gif --lossless -o anim.webp', 'anim.webp --resize-percent 50 -o anim.gif'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    let a = await decodeAnimation(input, ctx.workDir, ctx.signal);
    if (s.resizePercent < 100) {
      const w = Math.max(1, Math.round((a.width * s.resizePercent) / 100));
      const h = Math.max(1, Math.round((a.height * s.resizePercent) / 100));
      a = await mapFrames(a, (img) => img.resize(w, h, { fit: 'fill' }), ctx.signal);
    }
    ctx.progress(50, 'encoding');
    const toWebp = input.type?.ext !== 'webp';
    const out = ctx.out(toWebp ? 'webp' : 'gif');
    const joined = await joinAnimation(a);
    if (toWebp) await joined.webp({ quality: s.quality, lossless: s.lossless, effort: 4, delay: a.delays, loop: a.loop }).toFile(out);
    else await joined.gif({ effort: 7, delay: a.delays, loop: a.loop }).toFile(out);
    return {
      outputs: [outputFile(out)],
      data: {
        from: toWebp ? 'gif' : 'webp',
        to: toWebp ? 'webp' : 'gif',
        frames: a.frames.length,
        width: a.width,
        height: a.height,
        delays: a.delays,
        loop: a.loop,
      },
    };
  },
});
