import { z } from 'zod';
import { LAMA_FILE } from '../../../ai/bundles/object-eraser-colorize.js';
import { holeHalfWidth } from '../../../ai/classical/patchmatch/hole.js';
import { inpaint } from '../../../ai/tasks/inpaint.js';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { openInput } from '../_shared/decode.js';
import {
  decodeRgb,
  dilate,
  ERASER,
  formatSetting,
  hasModelFile,
  missingModelFile,
  modelData,
  outFormat,
  qualitySetting,
  writeRgb,
} from './inpaint-common.js';

/** A mask is small enough for classical completion when it covers at most this share of the image… */
export const SMALL_MASK_SHARE = 0.1;
/** …and no hole pixel is farther than this from a known pixel (a hole at most ~128 px across). */
export const SMALL_MASK_HALF_WIDTH = 64;
/** The mask is grown by this much, so the object's anti-aliased fringe goes too. */
const GROW = 2;

export default defineTool({
  id: 'erase-object',
  section: 'image',
  group: 'ai',
  summary: 'Inpaint (erase) the area marked white in a mask image.',
  description:
    'White (≥ 50% grey) pixels of the mask mark what to erase; the mask is scaled to the image when sizes differ and grown by 2 px. ' +
    'With the object-eraser-colorize bundle installed, LaMa (an inpainting network) fills the area. Without it, a small mask ' +
    `(at most ${SMALL_MASK_SHARE * 100}% of the image, no point more than ${SMALL_MASK_HALF_WIDTH} px inside it) is filled by classical ` +
    'multi-scale PatchMatch completion, which continues the surrounding texture; a larger mask answers FEATURE_NOT_INSTALLED rather ' +
    'than a poor fill. data.method says which ran (lama or patchmatch) and data.model the model (null when classical).',
  input: {
    kind: 'file',
    accept: ['image/*'],
    extra: [
      {
        field: 'mask',
        flag: 'mask',
        accept: ['image/*'],
        required: true,
        description: 'mask image: white marks the area to erase, black keeps',
      },
    ],
  },
  frames: 'first',
  settings: z.object({
    format: formatSetting,
    quality: qualitySetting,
  }),
  needs: { optionalBundles: ['object-eraser-colorize'] },
  execution: 'long',
  batch: false,
  output: 'image (format setting; the input’s by default)',
  examples: ['photo.jpg --mask mask.png -o photo-clean.jpg', 'shot.png --mask wires.png --format webp --quality 90'],
  async run(ctx, { files, extra }, s) {
    const input = files[0]!;
    const img = await decodeRgb(input, ctx);
    const { width: W, height: H } = img;
    ctx.progress(5, 'reading mask');
    const m = await (await openInput(extra.mask![0]!, ctx.workDir, ctx.signal))
      .autoOrient()
      .flatten({ background: '#000000' })
      .greyscale()
      .resize(W, H, { fit: 'fill', kernel: 'nearest' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const raw = new Uint8Array(W * H);
    let marked = 0;
    for (let p = 0; p < W * H; p++) {
      if (m.data[p * m.info.channels]! >= 128) {
        raw[p] = 1;
        marked++;
      }
    }
    if (!marked) throw new KilnError('VALIDATION_ERROR', 'The mask marks nothing to erase (no white pixels).', { reason: 'empty-mask' });
    if (marked === W * H)
      throw new KilnError('VALIDATION_ERROR', 'The mask marks the whole image; nothing is left to fill from.', { reason: 'full-mask' });
    const mask = dilate(raw, W, H, GROW);
    let holes = 0;
    for (let p = 0; p < W * H; p++) holes += mask[p]!;
    const share = holes / (W * H);
    const halfWidth = holeHalfWidth(mask, W, H);
    const small = share <= SMALL_MASK_SHARE && halfWidth <= SMALL_MASK_HALF_WIDTH;
    const lama = await hasModelFile(ctx.dataDir, ERASER, LAMA_FILE);
    if (!lama && !small) await missingModelFile(ctx.dataDir, 'erase-object', ERASER, LAMA_FILE, 'a mask this large needs LaMa');
    const method = lama ? 'lama' : 'patchmatch';
    ctx.progress(10, method === 'lama' ? 'inpainting (LaMa)' : 'inpainting (PatchMatch)');
    const t0 = performance.now();
    const r = await inpaint(
      { width: W, height: H, rgb: img.rgb, mask },
      {
        method,
        model: 'lama-fp32',
        dataDir: ctx.dataDir,
        signal: ctx.signal,
        progress: (f, stage) => ctx.progress(10 + f * 80, stage),
      },
    );
    const ms = Math.round(performance.now() - t0);
    const format = outFormat(input, s.format);
    const out = await writeRgb(ctx, { ...img, rgb: r.rgb }, format, s.quality);
    return {
      outputs: [out],
      data: {
        method: r.method,
        ...modelData(r.info),
        erasedPixels: holes,
        maskShare: +share.toFixed(4),
        tiles: r.tiles,
        workScale: r.scale,
        region: r.region,
        ms,
      },
    };
  },
});
