import { z } from 'zod';
import { outputFile } from '../../_shared/output.js';
import { defineTool } from '../../../core/tool.js';
import { getSharp, lossyQuality, sameFormatAs, supportsAlpha, writeImage } from '../../../engines/sharp.js';
import { DENOISE_FILE } from '../../../ai/bundles/upscale-enhance.js';
import { denoiseRgb } from '../../../ai/tasks/upscale.js';
import { requireImportedFile } from '../../bundles.js';
import { noiseSigma } from './denoise-common.js';
import { nonLocalMeansOffThread } from './nlm-worker.js';
import { decodeOriented } from './face-common.js';

const TIERS = ['quick', 'balanced', 'quality', 'maximum'] as const;
const FORMATS = ['original', 'png', 'jpeg', 'webp', 'avif', 'jxl'] as const;

/** Per tier of the neural path: feathered overlap between tiles, and whether a flipped second pass is averaged in (self-ensemble). */
const NEURAL = {
  balanced: { overlap: 16, ensemble: false },
  quality: { overlap: 32, ensemble: false },
  maximum: { overlap: 32, ensemble: true },
} as const;

function rgbOf(rgba: Buffer, n: number): Uint8Array {
  const rgb = new Uint8Array(n * 3);
  for (let p = 0; p < n; p++) for (let c = 0; c < 3; c++) rgb[p * 3 + c] = rgba[p * 4 + c]!;
  return rgb;
}

function flipH(rgb: Uint8Array, w: number, h: number): Uint8Array {
  const out = new Uint8Array(rgb.length);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) out.set(rgb.subarray((y * w + x) * 3, (y * w + x) * 3 + 3), (y * w + (w - 1 - x)) * 3);
  return out;
}

export default defineTool({
  id: 'noise-removal',
  section: 'image',
  group: 'ai',
  summary: 'Remove noise and grain with tiered denoising up to neural models.',
  description:
    'tier quick runs classically, with no model: non-local means in YCbCr (3×3 patches, 11×11 search, patch distances on luma), its strength set from the measured noise σ ' +
    '(Immerkær) × strength/50, eased by detailPreservation; colorNoise sets the chroma filtering. tier balanced, quality and maximum run the denoising network imported into ' +
    'the upscale-enhance bundle (no classical fallback: without it they answer FEATURE_NOT_INSTALLED), tiled with a feathered overlap of 16 (balanced) or 32 px; maximum ' +
    'averages a horizontally flipped second pass (self-ensemble). strength 0–100 is how much of the network’s result is kept (detailPreservation keeps more of the input’s ' +
    'luma texture, colorNoise takes more of its chroma). data.method and data.model say what ran.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    tier: z
      .enum(TIERS)
      .default('balanced')
      .describe('quick = classical non-local means (no model); balanced/quality/maximum = the denoising network.'),
    strength: z.number().min(0).max(100).default(50).describe('Denoise strength.'),
    detailPreservation: z.number().min(0).max(100).default(50).describe('Higher keeps more texture.'),
    colorNoise: z.number().min(0).max(100).default(30).describe('Color-noise reduction strength.'),
    format: z.enum(FORMATS).default('original').describe('Output format (original keeps the input format).'),
    quality: z.number().int().min(1).max(100).default(90).describe('Output encoding quality.'),
  }),
  needs: { optionalBundles: ['upscale-enhance'] },
  execution: 'long',
  output: 'image in the chosen format',
  examples: [
    'grainy.jpg --tier quick -o clean.jpg',
    'night.jpg --tier quality --strength 70',
    'scan.png --tier quick --color-noise 80 --format png',
  ],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    if (s.tier !== 'quick')
      await requireImportedFile(ctx.dataDir, 'noise-removal', 'upscale-enhance', DENOISE_FILE, `noise-removal tier ${s.tier}`);
    const sharp = await getSharp();
    const img = await decodeOriented(input, ctx);
    const { width: W, height: H } = img;
    const px = Buffer.from(img.rgba);
    const sigmaBefore = noiseSigma(px, W, H, 4);
    const detail = 1.25 - (s.detailPreservation / 100) * 0.5;
    let data: Record<string, unknown>;
    ctx.progress(5, 'measuring noise');
    if (s.tier === 'quick') {
      const base = Math.max(0.5, sigmaBefore);
      const hLuma = base * (s.strength / 50) * detail;
      const hChroma = base * (s.colorNoise / 30) * (s.strength > 0 ? 1 : 0);
      ctx.progress(10, 'non-local means');
      const filtered = await nonLocalMeansOffThread(
        { px: new Uint8Array(px), width: W, height: H, channels: 4, opts: { hLuma, hChroma, noise: base } },
        { signal: ctx.signal, progress: (f) => ctx.progress(10 + f * 80, 'non-local means') },
      );
      px.set(filtered);
      data = {
        method: 'non-local means',
        model: null,
        device: 'cpu',
        provider: 'javascript',
        filter: { lumaSigma: +hLuma.toFixed(2), chromaSigma: +hChroma.toFixed(2), patch: 3, search: 11 },
      };
    } else {
      const t = NEURAL[s.tier];
      const call = (from: number, to: number) => ({
        dataDir: ctx.dataDir,
        signal: ctx.signal,
        progress: (f: number, stage?: string) => ctx.progress(from + f * (to - from), stage ?? 'denoising'),
      });
      const rgb = rgbOf(img.rgba, W * H);
      const a = await denoiseRgb({ width: W, height: H, rgb: rgb.slice() }, call(10, t.ensemble ? 50 : 90), { overlap: t.overlap });
      let net = a.rgb;
      if (t.ensemble) {
        const b = await denoiseRgb({ width: W, height: H, rgb: flipH(rgb, W, H) }, call(50, 90), { overlap: t.overlap });
        const back = flipH(b.rgb, W, H);
        net = new Uint8Array(net.length);
        for (let i = 0; i < net.length; i++) net[i] = (a.rgb[i]! + back[i]! + 1) >> 1;
      }
      // Keep `mix` of the network's luma change and `cmix` of its chroma change.
      const mix = Math.min(1, (s.strength / 50) * 0.75 * detail) * (s.strength > 0 ? 1 : 0);
      const cmix = Math.max(mix, s.colorNoise / 100);
      for (let p = 0; p < W * H; p++) {
        const r0 = rgb[p * 3]!;
        const g0 = rgb[p * 3 + 1]!;
        const b0 = rgb[p * 3 + 2]!;
        const dr = net[p * 3]! - r0;
        const dg = net[p * 3 + 1]! - g0;
        const db = net[p * 3 + 2]! - b0;
        const dl = 0.299 * dr + 0.587 * dg + 0.114 * db;
        // Luma change × mix plus chroma change × cmix.
        const set = (c: number, v0: number, d: number) => {
          const v = v0 + dl * mix + (d - dl) * cmix;
          px[p * 4 + c] = v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v);
        };
        set(0, r0, dr);
        set(1, g0, dg);
        set(2, b0, db);
      }
      data = {
        method: 'neural denoising',
        model: a.info.model,
        device: a.info.device,
        provider: a.info.provider,
        tiles: a.tiles,
        overlap: t.overlap,
        selfEnsemble: t.ensemble,
        mix: { luma: +mix.toFixed(3), chroma: +cmix.toFixed(3) },
      };
    }
    const sigmaAfter = noiseSigma(px, W, H, 4);
    const format = s.format === 'original' ? sameFormatAs(input.type?.ext) : s.format === 'jpeg' ? 'jpg' : s.format;
    let out = sharp(px, { raw: { width: W, height: H, channels: 4 } });
    if (!img.hasAlpha || !supportsAlpha(format)) out = out.removeAlpha();
    ctx.progress(92, 'encoding');
    const dest = ctx.out(format);
    await writeImage(out, dest, format, { quality: lossyQuality(format, s.quality) });
    return {
      outputs: [outputFile(dest)],
      data: { tier: s.tier, ...data, noiseSigma: { before: +sigmaBefore.toFixed(2), after: +sigmaAfter.toFixed(2) } },
    };
  },
});
