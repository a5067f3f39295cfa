import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp, inputMetadata, medianRaw, writeImage } from '../../../engines/sharp.js';
import { DENOISE_FILE } from '../../../ai/bundles/upscale-enhance.js';
import { denoiseRgb, mixRgb } from '../../../ai/tasks/upscale.js';
import { isBundleFileInstalled, isBundleInstalled } from '../../bundles.js';
import { analyse, type Analysis } from '../_shared/enhance-analysis.js';
import { outputFormat } from '../_shared/pixels.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';

const SCENES = ['auto', 'portrait', 'landscape', 'low-light', 'food', 'document'] as const;
const ONLY = ['exposure', 'contrast', 'color', 'sharpness'] as const;
type Scene = (typeof SCENES)[number];
type Corrections = {
  exposure: boolean;
  contrast: boolean;
  whiteBalance: boolean;
  saturation: boolean;
  sharpness: boolean;
  denoise: boolean;
};

/** Per scene: target mean brightness, highlight/shadow clip for the levels stretch, target saturation, white-balance share, sharpen and noise thresholds. */
const SCENE: Record<Scene, { brightness: number; clip: number; saturation: number; wb: number; sharpen: number; noiseAt: number }> = {
  auto: { brightness: 118, clip: 0.005, saturation: 0.32, wb: 1, sharpen: 1, noiseAt: 3 },
  portrait: { brightness: 125, clip: 0.003, saturation: 0.28, wb: 1, sharpen: 0.6, noiseAt: 2.5 },
  landscape: { brightness: 115, clip: 0.005, saturation: 0.42, wb: 0.8, sharpen: 1.2, noiseAt: 3 },
  'low-light': { brightness: 110, clip: 0.01, saturation: 0.3, wb: 1, sharpen: 0.5, noiseAt: 1.5 },
  // Warm casts are part of food photos: correct white balance only partly.
  food: { brightness: 128, clip: 0.005, saturation: 0.45, wb: 0.4, sharpen: 1, noiseAt: 3 },
  document: { brightness: 170, clip: 0.02, saturation: 0, wb: 1, sharpen: 1.5, noiseAt: 2 },
};

export default defineTool({
  id: 'image-enhancement',
  section: 'image',
  group: 'ai',
  summary: 'One-click analysis-based auto-correction of exposure, contrast and white balance with scene modes.',
  description:
    'Measures the image (brightness percentiles, grey-world channel means on mid-tones, mean saturation, Laplacian variance, Immerkær noise estimate) and corrects only what the ' +
    'measurements call for: gamma toward the scene’s target brightness, a levels stretch, per-channel white-balance gains, saturation, median denoise and sharpening. ' +
    'intensity (alias strength) scales every correction (0 = none, 100 = full). mode exposure/contrast/color/sharpness (catalog spelling) runs only that correction. ' +
    'deepEnhance runs the denoising network of the upscale-enhance bundle (imported: it has no verifiable download) in place of the median; without it the classical path runs and data.deepEnhance says which method ran and why.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    mode: z
      .enum([...SCENES, ...ONLY])
      .default('auto')
      .describe(
        'Scene mode (auto, portrait, landscape, low-light, food, document) or a single correction (exposure, contrast, color, sharpness).',
      ),
    intensity: z.number().min(0).max(100).default(50).describe('Overall correction strength.'),
    strength: z
      .number()
      .min(0)
      .max(100)
      .optional()
      .describe('Catalog spelling of intensity (default 50); intensity wins when both differ from the default.'),
    corrections: z
      .object({
        exposure: z.boolean().default(true),
        contrast: z.boolean().default(true),
        whiteBalance: z.boolean().default(true),
        saturation: z.boolean().default(true),
        sharpness: z.boolean().default(true),
        denoise: z.boolean().default(true),
      })
      .strict()
      .prefault({})
      .describe('Which corrections may run: {exposure, contrast, whiteBalance, saturation, sharpness, denoise}, each default true.'),
    deepEnhance: z.boolean().default(false).describe('Neural noise removal; needs the upscale-enhance bundle.'),
  }),
  needs: { optionalBundles: ['upscale-enhance'] },
  output: 'image in the input format',
  examples: ['photo.jpg', 'dark.jpg --mode low-light --intensity 80', 'scan.jpg --mode document --corrections \'{"sharpness":false}\''],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const sharp = await getSharp();
    const amount = (s.intensity === 50 && s.strength !== undefined ? s.strength : s.intensity) / 100;
    const only = (ONLY as readonly string[]).includes(s.mode) ? (s.mode as (typeof ONLY)[number]) : undefined;
    const scene: Scene = only ? 'auto' : (s.mode as Scene);
    const c: Corrections = only
      ? {
          exposure: only === 'exposure',
          contrast: only === 'contrast',
          whiteBalance: only === 'color',
          saturation: only === 'color',
          sharpness: only === 'sharpness',
          denoise: false,
        }
      : s.corrections;
    const p = SCENE[scene];

    const img = await openInput(input, ctx.workDir);
    const { hasAlpha } = await inputMetadata(img);
    img.autoOrient();
    const { data, info } = await img.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const W = info.width;
    const H = info.height;
    const small = await sharp(data, { raw: { width: W, height: H, channels: 4 } })
      .resize({ width: 384, height: 384, fit: 'inside', withoutEnlargement: true })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const a = analyse(small.data, small.info.width, small.info.height, 4, p.clip);
    ctx.progress(25, 'analysing');

    const applied: Record<string, unknown> = {};
    // 1. White balance: grey-world gains, limited so a genuinely colourful scene is not neutralised.
    let gains = [1, 1, 1];
    if (c.whiteBalance) {
      const [mr, mg, mb] = a.channelMeans;
      const avg = (mr + mg + mb) / 3;
      gains = [mr, mg, mb].map((m) => 1 + (clamp(avg / Math.max(1, m), 0.75, 1.33) - 1) * amount * p.wb);
      applied.whiteBalance = { gains: gains.map((g) => +g.toFixed(3)) };
    }
    // 2. Levels: stretch the clipped range to 0-255.
    let lo = 0,
      hi = 255;
    if (c.contrast && a.highLuma - a.lowLuma > 8) {
      lo = a.lowLuma * amount;
      hi = 255 - (255 - a.highLuma) * amount;
      applied.contrast = { black: +lo.toFixed(1), white: +hi.toFixed(1) };
    }
    // 3. Exposure: gamma that moves the (stretched) mean toward the scene target.
    let gamma = 1;
    if (c.exposure) {
      const m = clamp((a.meanLuma - lo) / Math.max(1, hi - lo), 0.02, 0.98);
      const full = clamp(Math.log(p.brightness / 255) / Math.log(m), 0.45, 2.2);
      gamma = Math.abs(full - 1) < 0.03 ? 1 : 1 + (full - 1) * amount;
      if (gamma !== 1) applied.exposure = { gamma: +gamma.toFixed(3), meanBefore: +a.meanLuma.toFixed(1), target: p.brightness };
    }
    const luts = gains.map((g) => {
      const t = new Uint8Array(256);
      for (let v = 0; v < 256; v++) t[v] = Math.round(255 * clamp((v * g - lo) / (hi - lo), 0, 1) ** gamma);
      return t;
    });
    for (let i = 0; i < data.length; i += 4) {
      data[i] = luts[0]![data[i]!]!;
      data[i + 1] = luts[1]![data[i + 1]!]!;
      data[i + 2] = luts[2]![data[i + 2]!]!;
    }
    ctx.progress(55, 'correcting');
    let out = sharp(data, { raw: { width: W, height: H, channels: 4 } });
    // 4. Denoise before anything sharpens the noise: the imported denoising network when deepEnhance
    // asks for it and it is installed, else (and without deepEnhance) a median where noise was measured.
    let deep: Record<string, unknown> | undefined;
    if (s.deepEnhance) {
      const bundle = await isBundleInstalled(ctx.dataDir, 'upscale-enhance');
      const model = bundle && (await isBundleFileInstalled(ctx.dataDir, 'upscale-enhance', DENOISE_FILE));
      if (model) {
        ctx.progress(58, 'neural denoising');
        const { data: px } = await out.clone().removeAlpha().raw().toBuffer({ resolveWithObject: true });
        const rgb = new Uint8Array(px.buffer, px.byteOffset, px.byteLength);
        const d = await denoiseRgb(
          { width: W, height: H, rgb: rgb.slice() },
          { dataDir: ctx.dataDir, signal: ctx.signal, progress: (f) => ctx.progress(58 + f * 25, 'neural denoising') },
        );
        // Strength follows intensity (full at 100), like the other corrections.
        const mixed = mixRgb(rgb, d.rgb, Math.min(1, 0.5 + amount / 2));
        for (let p = 0; p < W * H; p++) for (let c = 0; c < 3; c++) data[p * 4 + c] = mixed[p * 3 + c]!;
        out = sharp(data, { raw: { width: W, height: H, channels: 4 } });
        deep = {
          requested: true,
          applied: true,
          method: 'neural denoising',
          model: d.info.model,
          device: d.info.device,
          provider: d.info.provider,
          tiles: d.tiles,
          mix: +Math.min(1, 0.5 + amount / 2).toFixed(3),
        };
        applied.denoise = { method: 'neural denoising', model: d.info.model };
      } else {
        deep = {
          requested: true,
          applied: false,
          method: 'classical',
          model: null,
          reason: bundle
            ? `The denoising network (${DENOISE_FILE}) of the upscale-enhance bundle has no verifiable download and is not imported (kiln features import FILE); the classical corrections were applied.`
            : 'The upscale-enhance bundle is not installed (kiln features install upscale-enhance); the classical corrections were applied.',
        };
      }
    }
    if (!deep?.applied && c.denoise && a.noiseSigma * (0.5 + amount) > p.noiseAt) {
      const size = a.noiseSigma > 2.5 * p.noiseAt ? 5 : 3;
      out = sharp(await medianRaw(await out.raw().toBuffer(), { width: W, height: H, channels: 4 }, size), {
        raw: { width: W, height: H, channels: 4 },
      });
      applied.denoise = { median: size, noiseSigma: +a.noiseSigma.toFixed(2) };
    }
    // 5. Saturation toward the scene's target, never beyond ×1.5 or below ×0.8.
    if (c.saturation && p.saturation > 0 && a.meanSaturation > 0.02) {
      const f = 1 + (clamp(p.saturation / a.meanSaturation, 0.8, 1.5) - 1) * amount;
      if (Math.abs(f - 1) > 0.01) {
        out = sharp(await out.modulate({ saturation: f }).raw().toBuffer(), { raw: { width: W, height: H, channels: 4 } });
        applied.saturation = { factor: +f.toFixed(3), meanBefore: +a.meanSaturation.toFixed(3) };
      }
    }
    // 6. Sharpen soft images (low Laplacian variance) only.
    if (c.sharpness && amount > 0 && p.sharpen > 0 && a.laplacianVariance < 400) {
      const sigma = 0.5 + amount * p.sharpen * 0.8;
      out = out.sharpen({ sigma, m1: 0.5, m2: 2 + 2 * amount });
      applied.sharpness = { sigma: +sigma.toFixed(2), laplacianVarianceBefore: +a.laplacianVariance.toFixed(1) };
    }
    const format = outputFormat(input);
    const dest = ctx.out(format);
    // Worked on as RGBA: an input without alpha is written without it (the enhancement makes nothing transparent).
    await writeImage(out, dest, format, { quality: format === 'jpg' ? 92 : undefined, trimAlpha: !hasAlpha });
    return {
      outputs: [outputFile(dest)],
      data: {
        mode: s.mode,
        scene,
        intensity: Math.round(amount * 100),
        analysis: round(a),
        applied,
        ...(deep ? { deepEnhance: deep } : {}),
      },
    };
  },
});

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

function round(a: Analysis): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(a).map(([k, v]) => [k, Array.isArray(v) ? v.map((x: number) => +x.toFixed(2)) : +(v as number).toFixed(3)]),
  );
}
