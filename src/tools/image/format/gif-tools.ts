import path from 'node:path';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { zipFiles } from '../../../core/zip.js';
import { colorSchema, svgPaint } from '../../_shared/color.js';
import { decodeAnimation, frameImage, joinAnimation, mapFrames, MIN_GIF_DELAY, type Animation } from '../_shared/animation.js';
import { MAX_SIDE, refuseOverPixelLimit } from '../_shared/pixel-limit.js';
import { outputFile } from '../../_shared/output.js';
import { checkAbort } from '../_shared/cancel.js';
import { xmlEscape } from '../_shared/xml.js';

export default defineTool({
  id: 'gif-tools',
  section: 'image',
  group: 'format',
  summary: 'Edit animated GIFs: resize, optimize, reverse, change speed, extract frames, rotate, add text.',
  description:
    'Works frame by frame and keeps the animation (frame delays; loop is set by `loop`, 0 = forever). resize: width/height/percentage. ' +
    'optimize: palette size (colors), dither, effort, and frame-difference reuse. reverse: frames and delays backwards. speed: delays ÷ speedFactor ' +
    `(never under ${MIN_GIF_DELAY} ms, which browsers would slow down). extract-frames: one frame as an image (single) or a ZIP (range, all). ` +
    'rotate: 90/180/270 and/or flips. add-text: a caption on every frame. Takes GIF, animated WebP and APNG; writes GIF.',
  input: { kind: 'file', accept: ['.gif', '.webp', '.apng'] },
  settings: z.object({
    action: z
      .enum(['resize', 'optimize', 'reverse', 'speed', 'extract-frames', 'rotate', 'add-text'])
      .default('resize')
      .describe('Operation.'),
    loop: z.int().min(0).max(100).default(0).describe('Loop count of the output (0 = infinite).'),
    width: z.int().min(1).max(16384).optional().describe('Target width (resize).'),
    height: z.int().min(1).max(16384).optional().describe('Target height (resize).'),
    percentage: z.number().min(1).max(500).optional().describe('Scale percentage; overrides width/height (resize).'),
    colors: z.int().min(2).max(256).default(256).describe('Palette size (optimize).'),
    dither: z.number().min(0).max(1).default(1).describe('Dithering strength (optimize).'),
    effort: z.int().min(1).max(10).default(7).describe('Optimization effort (optimize).'),
    speedFactor: z.number().min(0.1).max(10).default(1).describe('Speed multiplier, >1 faster (speed).'),
    extractMode: z.enum(['single', 'range', 'all']).default('single').describe('Which frames to extract (extract-frames).'),
    frameNumber: z.int().min(0).default(0).describe('Frame index, from 0 (extract-frames single).'),
    frameStart: z.int().min(0).default(0).describe('First frame (extract-frames range).'),
    frameEnd: z.int().min(0).optional().describe('Last frame, inclusive (extract-frames range; default the last).'),
    extractFormat: z.enum(['png', 'webp']).default('png').describe('Frame image format (extract-frames).'),
    angle: z.literal([90, 180, 270]).optional().describe('Rotation angle (rotate).'),
    flipH: z.boolean().default(false).describe('Mirror horizontally (rotate).'),
    flipV: z.boolean().default(false).describe('Flip vertically (rotate).'),
    text: z.string().max(200).optional().describe('Caption drawn on every frame (add-text; required there).'),
    fontSize: z.int().min(8).max(200).default(32).describe('Caption size in px (add-text).'),
    color: colorSchema('#FFFFFF').describe('Caption color (add-text).'),
    position: z.enum(['top', 'center', 'bottom']).default('bottom').describe('Caption position (add-text).'),
  }),
  check: (s) => {
    if (s.action === 'resize' && s.width === undefined && s.height === undefined && s.percentage === undefined)
      return 'gif-tools resize needs width, height or percentage.';
    if (s.action === 'rotate' && s.angle === undefined && !s.flipH && !s.flipV) return 'gif-tools rotate needs angle, flipH or flipV.';
    if (s.action === 'add-text' && !s.text?.trim()) return 'gif-tools add-text needs text.';
    if (s.action === 'extract-frames' && s.extractMode === 'range' && s.frameEnd !== undefined && s.frameEnd < s.frameStart)
      return 'frameEnd must not be before frameStart.';
  },
  output: 'GIF; for extract-frames one PNG/WebP (single) or a ZIP of frames',
  examples: [
    'anim.gif --action resize --width 320 -o small.gif',
    'anim.gif --action reverse -o back.gif',
    'anim.gif --action extract-frames --extract-mode all -o frames.zip',
  ],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    let a = await decodeAnimation(input, ctx.workDir, ctx.signal);
    const n = a.frames.length;
    ctx.progress(20, 'decoded');

    if (s.action === 'extract-frames') {
      const [from, to] =
        s.extractMode === 'single'
          ? [s.frameNumber, s.frameNumber]
          : s.extractMode === 'all'
            ? [0, n - 1]
            : [s.frameStart, s.frameEnd ?? n - 1];
      if (from >= n || to >= n)
        throw new KilnError(
          'VALIDATION_ERROR',
          `The animation has ${n} frame${n === 1 ? '' : 's'} (0-${n - 1}); frame ${Math.max(from, to)} does not exist.`,
        );
      const written: { path: string; name: string }[] = [];
      const base = path.basename(ctx.out(''));
      const digits = String(n - 1).length;
      for (let i = from; i <= to; i++) {
        checkAbort(ctx.signal);
        const name = `${base}-frame-${String(i).padStart(digits, '0')}.${s.extractFormat}`;
        const p = s.extractMode === 'single' ? ctx.out(s.extractFormat, `-frame-${i}`) : path.join(ctx.workDir, name);
        const img = await frameImage(a, i);
        await (s.extractFormat === 'png' ? img.png() : img.webp({ lossless: true })).toFile(p);
        written.push({ path: p, name });
      }
      if (s.extractMode === 'single') return { outputs: [outputFile(written[0]!.path)], data: { frames: n, extracted: [from] } };
      const zip = ctx.out('zip', '-frames');
      await zipFiles(written, zip);
      return { outputs: [outputFile(zip)], data: { frames: n, extracted: written.map((_, k) => from + k) } };
    }

    const gif = { colours: 256, dither: 1, effort: 7, reuse: true, interFrameMaxError: 0, interPaletteMaxError: 3 };
    let speedClamped = false;
    switch (s.action) {
      case 'resize': {
        let w = s.width;
        let h = s.height;
        if (s.percentage !== undefined) {
          w = Math.max(1, Math.round((a.width * s.percentage) / 100));
          h = Math.max(1, Math.round((a.height * s.percentage) / 100));
        }
        w ??= Math.max(1, Math.round((a.width * h!) / a.height));
        h ??= Math.max(1, Math.round((a.height * w) / a.width));
        refuseOverPixelLimit({ what: 'resized animation', width: w, height: h, frames: n, maxSide: MAX_SIDE });
        a = await mapFrames(a, (img) => img.resize(w, h, { fit: 'fill' }), ctx.signal);
        break;
      }
      case 'optimize':
        Object.assign(gif, {
          colours: s.colors,
          dither: s.dither,
          effort: s.effort,
          interFrameMaxError: Math.round(s.effort * 0.8),
          interPaletteMaxError: 3 + s.effort * 2,
        });
        break;
      case 'reverse':
        a = { ...a, frames: [...a.frames].reverse(), delays: [...a.delays].reverse() };
        break;
      case 'speed':
        a = {
          ...a,
          delays: a.delays.map((d) => {
            const v = Math.round(d / s.speedFactor);
            if (v < MIN_GIF_DELAY) speedClamped = true;
            return Math.min(65535, Math.max(MIN_GIF_DELAY, v));
          }),
        };
        break;
      case 'rotate':
        a = await mapFrames(
          a,
          (img) => {
            let x = img;
            if (s.angle) x = x.rotate(s.angle);
            if (s.flipH) x = x.flop();
            if (s.flipV) x = x.flip();
            return x;
          },
          ctx.signal,
        );
        break;
      case 'add-text': {
        const caption = captionSvg(a, s.text!, s.fontSize, s.color, s.position);
        a = await mapFrames(a, (img) => img.composite([{ input: caption }]), ctx.signal);
        break;
      }
    }
    ctx.progress(70, 'encoding');
    const out = ctx.out('gif', `-${s.action}`);
    await (await joinAnimation(a)).gif({ ...gif, delay: a.delays, loop: s.loop }).toFile(out);
    return {
      outputs: [outputFile(out)],
      data: {
        frames: a.frames.length,
        width: a.width,
        height: a.height,
        delays: a.delays,
        loop: s.loop,
        ...(s.action === 'speed' ? { minimumDelayApplied: speedClamped } : {}),
      },
    };
  },
});

function captionSvg(a: Animation, text: string, size: number, color: string, position: 'top' | 'center' | 'bottom'): Buffer {
  const lines = text.split(/\r?\n/);
  const lh = size * 1.2;
  const block = lh * lines.length;
  const margin = Math.max(4, size * 0.4);
  const top = position === 'top' ? margin : position === 'center' ? (a.height - block) / 2 : a.height - margin - block;
  const tspans = lines.map((l, i) => `<tspan x="${a.width / 2}" y="${top + size + i * lh}">${xmlEscape(l)}</tspan>`).join('');
  // A dark outline keeps light captions readable on any frame (the classic GIF caption look).
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${a.width}" height="${a.height}"><text text-anchor="middle" font-family="DejaVu Sans, sans-serif" font-weight="bold" font-size="${size}" ${svgPaint(color)} stroke="#000000" stroke-width="${Math.max(1, size / 12)}" paint-order="stroke" stroke-linejoin="round">${tspans}</text></svg>`,
  );
}
