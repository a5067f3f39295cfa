import { z } from 'zod';
import { LAMA_FILE } from '../../../ai/bundles/object-eraser-colorize.js';
import { inpaint, workSide } from '../../../ai/tasks/inpaint.js';
import { defineTool } from '../../../core/tool.js';
import { checkCanvas } from '../_shared/layout.js';
import {
  decodeRgb,
  ERASER,
  formatSetting,
  hasModelFile,
  missingModelFile,
  modelData,
  outFormat,
  qualitySetting,
  writeRgb,
} from './inpaint-common.js';

/** balanced works on the region scaled to at most this side; high on workSide() (KILN_AI_INPAINT_SIDE, default 2048). */
const BALANCED_SIDE = 1024;

const side = (d: string) => z.number().int().min(0).default(0).describe(`Pixels to add at the ${d}.`);

export default defineTool({
  id: 'ai-canvas-expand',
  section: 'image',
  group: 'ai',
  summary: 'Extend the canvas on any side and fill the new area with generated content.',
  description:
    'Adds extendTop/Right/Bottom/Left pixels and fills them. tier fast runs without a model: the edges are extended outward and ' +
    'classical multi-scale PatchMatch completion continues the image’s texture over them. tier balanced and high outpaint with LaMa ' +
    `(object-eraser-colorize bundle; FEATURE_NOT_INSTALLED without it): balanced works at up to ${BALANCED_SIDE} px and scales the fill up, ` +
    'high at up to KILN_AI_INPAINT_SIDE (default 2048). The original pixels are kept exactly. data.method and data.model say what ran.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    extendTop: side('top'),
    extendRight: side('right'),
    extendBottom: side('bottom'),
    extendLeft: side('left'),
    tier: z.enum(['fast', 'balanced', 'high']).default('balanced').describe('Quality tier: fast (classical), balanced or high (LaMa).'),
    format: formatSetting,
    quality: qualitySetting,
  }),
  check: (s) =>
    s.extendTop + s.extendRight + s.extendBottom + s.extendLeft > 0
      ? undefined
      : 'At least one of extendTop, extendRight, extendBottom, extendLeft must be greater than 0.',
  needs: { optionalBundles: ['object-eraser-colorize'] },
  execution: 'long',
  output: 'image (format setting; the input’s by default)',
  examples: ['photo.jpg --extend-left 200 --extend-right 200 -o wide.jpg', 'photo.png --extend-top 128 --tier fast'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const method = s.tier === 'fast' ? 'patchmatch' : 'lama';
    if (method === 'lama' && !(await hasModelFile(ctx.dataDir, ERASER, LAMA_FILE))) {
      await missingModelFile(
        ctx.dataDir,
        'ai-canvas-expand',
        ERASER,
        LAMA_FILE,
        `tier ${s.tier} outpaints with LaMa; tier fast runs without it`,
      );
    }
    const img = await decodeRgb(input, ctx);
    const { width: w, height: h } = img;
    const W = w + s.extendLeft + s.extendRight;
    const H = h + s.extendTop + s.extendBottom;
    checkCanvas(W, H);
    // Edge extension: every new pixel starts as the nearest original pixel (the first guess PatchMatch refines).
    const rgb = new Uint8Array(W * H * 3);
    const alpha = img.alpha ? new Uint8Array(W * H) : null;
    const mask = new Uint8Array(W * H);
    for (let y = 0; y < H; y++) {
      const sy = Math.min(h - 1, Math.max(0, y - s.extendTop));
      const inY = y >= s.extendTop && y < s.extendTop + h;
      for (let x = 0; x < W; x++) {
        const sx = Math.min(w - 1, Math.max(0, x - s.extendLeft));
        const p = y * W + x;
        const q = sy * w + sx;
        rgb[p * 3] = img.rgb[q * 3]!;
        rgb[p * 3 + 1] = img.rgb[q * 3 + 1]!;
        rgb[p * 3 + 2] = img.rgb[q * 3 + 2]!;
        if (alpha) alpha[p] = img.alpha![q]!;
        if (!(inY && x >= s.extendLeft && x < s.extendLeft + w)) mask[p] = 1;
      }
    }
    ctx.progress(5, method === 'lama' ? 'outpainting (LaMa)' : 'outpainting (PatchMatch)');
    const t0 = performance.now();
    const r = await inpaint(
      { width: W, height: H, rgb, mask },
      {
        method,
        model: 'lama-fp32',
        initFromInput: true,
        maxSide: s.tier === 'balanced' ? BALANCED_SIDE : workSide(),
        dataDir: ctx.dataDir,
        signal: ctx.signal,
        progress: (f, stage) => ctx.progress(5 + f * 85, stage),
      },
    );
    const ms = Math.round(performance.now() - t0);
    const out = await writeRgb(ctx, { width: W, height: H, rgb: r.rgb, alpha }, outFormat(input, s.format), s.quality);
    return {
      outputs: [out],
      data: {
        width: W,
        height: H,
        originalWidth: w,
        originalHeight: h,
        tier: s.tier,
        method: r.method,
        ...modelData(r.info),
        tiles: r.tiles,
        workScale: r.scale,
        ms,
      },
    };
  },
});
