import type { Sharp } from 'sharp';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp, sameFormatAs, writeImage } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';

const SEPIA: [[number, number, number], [number, number, number], [number, number, number]] = [
  [0.393, 0.769, 0.189],
  [0.349, 0.686, 0.168],
  [0.272, 0.534, 0.131],
];

const pct = (min: number, max: number, def: number, d: string) => z.number().min(min).max(max).default(def).describe(d);

export default defineTool({
  id: 'adjust-colors',
  section: 'image',
  group: 'adjustments',
  summary: 'Adjust brightness, contrast, exposure, saturation, white balance, hue, sharpness, RGB levels and simple effects.',
  description:
    'Every setting maps to one libvips operation. One linear pass per channel computes ' +
    'out = gain × (c × (e × in + b − 128) + 128) where exposure e = 2^(exposure/50) (±2 stops), brightness b = brightness × 1.28 (added), ' +
    'contrast c = 1 + contrast/100 below zero and 1 + contrast/50 above (around mid-grey), and gain = red/green/blue ÷ 100 with ' +
    'temperature (warm raises red, lowers blue by up to 30%) and tint (magenta lowers green, raises red and blue by up to 15%/30%). ' +
    'Then modulate: saturation × (1 + saturation/100), hue rotation in degrees. Then the effect: grayscale (luminance), sepia (the usual ' +
    'sepia recombination matrix) or invert (negate, alpha untouched). Last, sharpness 1-100 runs an unsharp mask with sigma 0.5-3. ' +
    'Animated GIF/WebP input gives a still image of the first frame.',
  input: { kind: 'file', accept: ['image/*'], inMemory: true },
  frames: 'first',
  settings: z.object({
    brightness: pct(-100, 100, 0, 'Brightness shift.'),
    contrast: pct(-100, 100, 0, 'Contrast shift.'),
    exposure: pct(-100, 100, 0, 'Exposure / midtone gamma.'),
    saturation: pct(-100, 100, 0, 'Saturation shift.'),
    temperature: pct(-100, 100, 0, 'White balance: cool (blue) to warm (orange).'),
    tint: pct(-100, 100, 0, 'Tint: green to magenta.'),
    hue: pct(-180, 180, 0, 'Hue rotation in degrees.'),
    sharpness: pct(0, 100, 0, 'Sharpening strength.'),
    red: pct(0, 200, 100, 'Red channel level (100 = unchanged).'),
    green: pct(0, 200, 100, 'Green channel level (100 = unchanged).'),
    blue: pct(0, 200, 100, 'Blue channel level (100 = unchanged).'),
    effect: z.enum(['none', 'grayscale', 'sepia', 'invert']).default('none').describe('Color effect.'),
  }),
  output: 'image in the input format',
  examples: ['photo.jpg --brightness 20 --contrast 10', 'photo.jpg --effect sepia', 'photo.jpg --temperature 30 --saturation 15'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const ext = input.type?.ext;
    const sharp = await getSharp();
    let img = await openInput(input, ctx.workDir, ctx.signal);
    const meta = await img.metadata();
    if ((meta.orientation ?? 1) > 1) img.autoOrient();
    // libvips keeps only one linear/modulate/recomb per pipeline and orders them itself, so each stage
    // runs as its own pass over raw pixels in the order documented above.
    const pass = async (fn: (x: Sharp) => Sharp) => {
      const { data, info } = await fn(img).raw().toBuffer({ resolveWithObject: true });
      img = sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
    };
    // sharp runs linear() before the pipeline's colourspace conversion, so a greyscale input (one band)
    // would meet three gains ("Band expansion using linear is unsupported"): convert it in a pass first.
    if ((meta.channels ?? 3) < 3) await pass((x) => x.toColourspace('srgb'));
    else img.toColourspace('srgb');
    if (!meta.hasAlpha) img.removeAlpha();

    const e = 2 ** (s.exposure / 50);
    const b = s.brightness * 1.28;
    const c = s.contrast < 0 ? 1 + s.contrast / 100 : 1 + s.contrast / 50;
    const t = s.temperature / 100;
    const tn = s.tint / 100;
    const gains = [
      (s.red / 100) * (1 + 0.3 * t) * (1 + 0.15 * tn),
      (s.green / 100) * (1 - 0.3 * tn),
      (s.blue / 100) * (1 - 0.3 * t) * (1 + 0.15 * tn),
    ];
    if (e !== 1 || b !== 0 || c !== 1 || gains.some((g) => g !== 1)) {
      const mul = gains.map((g) => g * c * e);
      const add = gains.map((g) => g * (c * (b - 128) + 128));
      if (meta.hasAlpha) {
        mul.push(1);
        add.push(0);
      }
      await pass((x) => x.linear(mul, add));
    }
    if (s.saturation !== 0 || s.hue !== 0) await pass((x) => x.modulate({ saturation: 1 + s.saturation / 100, hue: Math.round(s.hue) }));
    if (s.effect === 'grayscale') await pass((x) => x.greyscale().toColourspace('srgb'));
    else if (s.effect === 'sepia') await pass((x) => x.recomb(SEPIA));
    else if (s.effect === 'invert') await pass((x) => x.negate({ alpha: false }));
    if (s.sharpness > 0) img.sharpen({ sigma: 0.5 + (s.sharpness / 100) * 2.5, m1: 1, m2: 2 + s.sharpness / 25 });
    ctx.progress(70, 'encoding');
    const format = sameFormatAs(ext);
    const out = ctx.out(format);
    await writeImage(img, out, format, { quality: format === 'jpg' ? 92 : undefined });
    return { outputs: [outputFile(out)] };
  },
});
