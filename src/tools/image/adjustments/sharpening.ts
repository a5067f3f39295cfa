import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp, medianRaw, type RawShape, writeImage } from '../../../engines/sharp.js';
import { outputFormat } from '../_shared/pixels.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';

const DENOISE_MEDIAN = { off: 0, light: 3, medium: 5, strong: 7 } as const;

export default defineTool({
  id: 'sharpening',
  section: 'image',
  group: 'adjustments',
  summary: 'Sharpen with adaptive, unsharp-mask or high-pass methods, optionally denoising first.',
  description:
    'adaptive: libvips sharpen in the L channel of LAB (sigma, m1, m2, x1, y2, y3). unsharp-mask: original + amount% × (original − Gaussian blur of radius), ' +
    'skipped where the difference is at most threshold. high-pass: convolution with a 3×3 or 5×5 high-pass kernel scaled by strength. denoise runs a median filter first.',
  input: { kind: 'file', accept: ['image/*'], inMemory: true },
  frames: 'first',
  settings: z.object({
    method: z.enum(['adaptive', 'unsharp-mask', 'high-pass']).default('adaptive').describe('Sharpening algorithm.'),
    sigma: z.number().min(0.5).max(10).default(1).describe('Gaussian sigma (adaptive).'),
    m1: z.number().min(0).max(10).default(1).describe('Sharpening of flat areas (adaptive).'),
    m2: z.number().min(0).max(20).default(3).describe('Sharpening of jagged areas (adaptive).'),
    x1: z.number().min(0).max(10).default(2).describe('Flat/jagged threshold (adaptive).'),
    y2: z.number().min(0).max(50).default(12).describe('Maximum flat-area sharpening (adaptive).'),
    y3: z.number().min(0).max(50).default(20).describe('Maximum jagged-area sharpening (adaptive).'),
    amount: z.number().min(0).max(1000).default(100).describe('Sharpening amount in percent (unsharp-mask).'),
    radius: z.number().min(0.1).max(5).default(1).describe('Blur radius in pixels (unsharp-mask).'),
    threshold: z.number().min(0).max(255).default(0).describe('Minimum brightness difference to sharpen (unsharp-mask).'),
    strength: z.number().min(0).max(100).default(50).describe('High-pass filter strength.'),
    kernelSize: z.literal([3, 5]).default(3).describe('Convolution kernel size (high-pass): 3 or 5.'),
    denoise: z.enum(['off', 'light', 'medium', 'strong']).default('off').describe('Median-filter noise reduction before sharpening.'),
  }),
  output: 'image in the input format',
  examples: ['photo.jpg --method unsharp-mask --amount 150 --radius 1.5', 'scan.png --method high-pass --strength 70 --kernel-size 5'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const sharp = await getSharp();
    const base = await openInput(input, ctx.workDir);
    base.autoOrient();
    // Materialise once: every method below needs the (denoised) pixels as its own input.
    const { data: decoded, info } = await base.raw().toBuffer({ resolveWithObject: true });
    const raw = { width: info.width, height: info.height, channels: info.channels };
    const median = DENOISE_MEDIAN[s.denoise];
    // medianRaw, not sharp's median(): libvips refuses a window larger than the image (a 2×3 input).
    const data = median ? await medianRaw(decoded, raw as RawShape, median) : decoded;
    let img = sharp(data, { raw });
    ctx.progress(40, 'sharpening');
    if (s.method === 'adaptive') {
      img = img.sharpen({ sigma: s.sigma, m1: s.m1, m2: s.m2, x1: s.x1, y2: s.y2, y3: s.y3 });
    } else if (s.method === 'high-pass') {
      img = img.convolve(highPassKernel(s.kernelSize, s.strength / 50));
    } else {
      const blurred = await sharp(data, { raw }).blur(Math.max(0.3, s.radius)).raw().toBuffer();
      const out = Buffer.alloc(data.length);
      const k = s.amount / 100;
      const alpha = info.channels === 4 || info.channels === 2;
      for (let i = 0; i < data.length; i++) {
        const isAlpha = alpha && i % info.channels === info.channels - 1;
        const d = data[i]! - blurred[i]!;
        out[i] = isAlpha || Math.abs(d) <= s.threshold ? data[i]! : Math.max(0, Math.min(255, Math.round(data[i]! + k * d)));
      }
      img = sharp(out, { raw });
    }
    const format = outputFormat(input);
    const out = ctx.out(format);
    await writeImage(img, out, format, { quality: format === 'jpg' ? 92 : undefined });
    return { outputs: [outputFile(out)] };
  },
});

/** Identity plus `s` times a zero-sum high-pass (Laplacian for 3, original minus 5×5 box mean for 5). */
function highPassKernel(size: 3 | 5, s: number) {
  if (size === 3) return { width: 3, height: 3, kernel: [0, -s, 0, -s, 1 + 4 * s, -s, 0, -s, 0] };
  const kernel = new Array<number>(25).fill(-s / 25);
  kernel[12] = 1 + s - s / 25;
  return { width: 5, height: 5, kernel };
}
