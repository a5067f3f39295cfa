import { z } from 'zod';
import { outputFile } from '../../_shared/output.js';
import { defineTool } from '../../../core/tool.js';
import { getSharp, lossyQuality, supportsAlpha, writeImage } from '../../../engines/sharp.js';
import { detectFaces } from '../../../ai/tasks/faces.js';
import { restoreFaces } from '../../../ai/tasks/enhance-faces.js';
import { denoiseRgb, mixRgb, superResolve } from '../../../ai/tasks/upscale.js';
import { DENOISE_FILE, GFPGAN_FILE } from '../../../ai/bundles/upscale-enhance.js';
import { requireImportedFile } from '../../bundles.js';
import { refuseOverPixelLimit } from '../_shared/pixel-limit.js';
import { decodeOriented } from './face-common.js';
import { formatSetting, outFormat } from './inpaint-common.js';

const MODELS = { auto: 'medium', slim: 'slim', medium: 'medium', 'esrgan-slim': 'slim', 'esrgan-medium': 'medium' } as const;

/** RGB of RGBA. */
function rgbOf(rgba: Buffer, n: number): Uint8Array {
  const rgb = new Uint8Array(n * 3);
  for (let p = 0; p < n; p++) {
    rgb[p * 3] = rgba[p * 4]!;
    rgb[p * 3 + 1] = rgba[p * 4 + 1]!;
    rgb[p * 3 + 2] = rgba[p * 4 + 2]!;
  }
  return rgb;
}

export default defineTool({
  id: 'upscale',
  section: 'image',
  group: 'ai',
  summary: 'Enlarge an image with a super-resolution model.',
  description:
    'Super-resolution with the RDN networks UpscalerJS ships as ESRGAN slim and medium (upscale-enhance bundle, MIT), run on the tfjs runtime in tiles ' +
    '(overlap with a feathered blend, no seams; KILN_AI_TILE sets the tile side in input pixels, KILN_AI_TILE_MB the memory budget it is derived from, default 256 MB). ' +
    'The output is exactly scale × the input (rounded); a scale between the networks’ 2, 3 and 4 runs the next one up and Lanczos brings it to size. ' +
    'model: auto (= medium), slim (faster) or medium. faceEnhance restores detected faces with GFPGAN (needs the face-detection bundle and GFPGAN imported into upscale-enhance); ' +
    'denoise 0–1 first runs the imported denoising network at that strength. Alpha is resized with Lanczos. data says which model, device and provider ran.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    scale: z
      .number()
      .min(2)
      .max(4)
      .default(2)
      .describe('Upscale factor 2–4 (2, 3, 4 run a network directly; others run the next one up and resize).'),
    model: z.string().default('auto').describe("Model variant: auto (medium), slim or medium ('esrgan-' prefix accepted)."),
    faceEnhance: z.boolean().default(false).describe('Restore detected faces with GFPGAN after upscaling.'),
    denoise: z.number().min(0).max(1).default(0).describe('Neural denoising strength before upscaling (0 = off).'),
    format: formatSetting.describe('Output format; auto keeps the input format.'),
    quality: z.number().int().min(1).max(100).default(95).describe('Output encoding quality.'),
  }),
  check(s) {
    if (!(s.model in MODELS)) return `model must be one of ${Object.keys(MODELS).join(', ')} (got ${s.model}).`;
  },
  needs: {
    bundles: ['upscale-enhance'],
    optionalBundles: ['face-detection'],
    bundlesBySetting: { 'face-detection': { faceEnhance: [true] } },
  },
  execution: 'long',
  output: 'image, scale × the input',
  examples: [
    'photo.jpg --scale 4 -o photo-4x.png',
    'scan.png --scale 2 --model slim',
    'portrait.jpg --scale 2 --face-enhance --denoise 0.5',
  ],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const variant = MODELS[s.model as keyof typeof MODELS];
    // face-detection is checked by runTool (needs.bundlesBySetting); the GFPGAN file comes only by import.
    if (s.faceEnhance) await requireImportedFile(ctx.dataDir, 'upscale', 'upscale-enhance', GFPGAN_FILE, 'upscale faceEnhance');
    if (s.denoise > 0) await requireImportedFile(ctx.dataDir, 'upscale', 'upscale-enhance', DENOISE_FILE, 'upscale denoise');
    const sharp = await getSharp();
    const img = await decodeOriented(input, ctx);
    const W = img.width;
    const H = img.height;
    const outW = Math.round(W * s.scale);
    const outH = Math.round(H * s.scale);
    refuseOverPixelLimit({ what: `upscaled image (${W}×${H} × ${s.scale})`, width: outW, height: outH });
    let rgb = rgbOf(img.rgba, W * H);
    const data: Record<string, unknown> = {};
    const t0 = performance.now();
    if (s.denoise > 0) {
      ctx.progress(2, 'denoising');
      const d = await denoiseRgb(
        { width: W, height: H, rgb: rgb.slice() },
        { dataDir: ctx.dataDir, signal: ctx.signal, progress: (f) => ctx.progress(2 + f * 18, 'denoising') },
      );
      rgb = mixRgb(rgb, d.rgb, s.denoise);
      data.denoise = { strength: s.denoise, method: 'neural', model: d.info.model, tiles: d.tiles, ms: d.info.runMs };
    }
    const from = s.denoise > 0 ? 20 : 2;
    const to = s.faceEnhance ? 75 : 90;
    ctx.progress(from, 'upscaling');
    const up = await superResolve(
      { width: W, height: H, rgb },
      { scale: s.scale, variant },
      { dataDir: ctx.dataDir, signal: ctx.signal, progress: (f, stage) => ctx.progress(from + f * (to - from), stage ?? 'upscaling') },
    );
    const upMs = Math.round(performance.now() - t0);
    let pixels: Uint8Array = up.rgb;
    let pw = up.width;
    let ph = up.height;
    if (pw !== outW || ph !== outH) {
      const r = await sharp(Buffer.from(pixels.buffer, pixels.byteOffset, pixels.byteLength), {
        raw: { width: pw, height: ph, channels: 3 },
      })
        .resize(outW, outH, { fit: 'fill', kernel: 'lanczos3' })
        .raw()
        .toBuffer();
      pixels = new Uint8Array(r.buffer, r.byteOffset, r.byteLength);
      pw = outW;
      ph = outH;
    }
    if (s.faceEnhance) {
      ctx.progress(76, 'detecting faces');
      const call = { dataDir: ctx.dataDir, signal: ctx.signal };
      const faces = await detectFaces({ width: pw, height: ph, rgb: pixels.slice() }, { minConfidence: 0.5 }, call);
      ctx.progress(82, 'restoring faces');
      const restored = await restoreFaces({ width: pw, height: ph, channels: 3, data: pixels }, faces, 1, call);
      data.faceEnhance = { faces: faces.length, model: restored.info?.model ?? null, detector: faces.info.model };
    }
    ctx.signal.throwIfAborted();
    let out = sharp(Buffer.from(pixels.buffer, pixels.byteOffset, pixels.byteLength), { raw: { width: pw, height: ph, channels: 3 } });
    const format = outFormat(input, s.format);
    if (img.hasAlpha && supportsAlpha(format)) {
      const alpha = await img.image().extractChannel(3).resize(outW, outH, { fit: 'fill', kernel: 'lanczos3' }).raw().toBuffer();
      out = sharp(
        await out
          .joinChannel(alpha, { raw: { width: outW, height: outH, channels: 1 } })
          .raw()
          .toBuffer(),
        {
          raw: { width: outW, height: outH, channels: 4 },
        },
      );
    }
    ctx.progress(92, 'encoding');
    const dest = ctx.out(format);
    await writeImage(out, dest, format, { quality: lossyQuality(format, s.quality) });
    return {
      outputs: [outputFile(dest)],
      data: {
        method: 'neural super-resolution',
        model: up.info.model,
        device: up.info.device,
        provider: up.info.provider,
        scale: s.scale,
        modelScale: up.modelScale,
        ...(up.modelScale !== s.scale && { resize: 'lanczos3' }),
        width: outW,
        height: outH,
        tiles: up.tiles,
        tile: up.tile,
        warm: up.info.warm,
        ms: upMs,
        ...data,
      },
    };
  },
});
