import { z } from 'zod';
import { colorizeDDColor } from '../../../ai/tasks/colorize.js';
import { inpaint } from '../../../ai/tasks/inpaint.js';
import { detectScratchesClassical, detectScratchesModel } from '../../../ai/tasks/restore.js';
import { defineTool } from '../../../core/tool.js';
import { isBundleInstalled } from '../../bundles.js';
import { GFPGAN_FILE } from '../../../ai/bundles/upscale-enhance.js';
import { restoreFaces } from '../../../ai/tasks/enhance-faces.js';
import { detectFaces } from '../../../ai/tasks/faces.js';
import { noiseSigma } from './denoise-common.js';
import { nonLocalMeansOffThread } from './nlm-worker.js';
import { DDCOLOR_FILE, LAMA_FILE } from '../../../ai/bundles/object-eraser-colorize.js';
import { decodeRgb, dilate, ERASER, hasModelFile, modelData, outFormat, writeRgb } from './inpaint-common.js';

const PRESETS = {
  light: { scratchRemoval: false, fidelity: 0.85, denoiseStrength: 15 },
  heavy: { scratchRemoval: true, fidelity: 0.5, denoiseStrength: 50 },
} as const;

export default defineTool({
  id: 'restore-photo',
  section: 'image',
  group: 'ai',
  summary: 'Repair scratches and tears, enhance faces, denoise and optionally colorize old photos.',
  description:
    'Runs the steps its settings ask for, in order, and data.steps says how each ran. Scratches: found by the scratch-detection ' +
    'network (photo-restoration bundle) when installed, otherwise classically (thin marks that differ from their 7×7 median; ' +
    'fidelity raises the threshold), then filled by LaMa (object-eraser-colorize bundle) or classical PatchMatch completion. ' +
    'Faces: GFPGAN (upscale-enhance bundle, by import) on the faces the face-detection bundle finds, blended by 1 − fidelity/2; ' +
    'skipped with a warning in data when either is not installed. ' +
    'Denoise: non-local means (classical, as noise-removal quick), by denoiseStrength and fidelity. Colorize: DDColor (object-eraser-colorize), skipped with a ' +
    'warning when not installed. mode light/heavy presets scratchRemoval, fidelity and denoiseStrength; values sent explicitly win.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    scratchRemoval: z.boolean().optional().describe('Scratch and tear repair (default true).'),
    faceEnhancement: z.boolean().default(true).describe('Face enhancement pass.'),
    fidelity: z.number().min(0).max(1).optional().describe('Higher is more conservative (default 0.7).'),
    denoise: z.boolean().default(true).describe('Denoising pass.'),
    denoiseStrength: z.number().min(0).max(100).optional().describe('Denoising strength (default 25).'),
    colorize: z.boolean().default(false).describe('Colorize after restoration.'),
    colorizeStrength: z.number().min(0).max(100).default(85).describe('Colorization strength.'),
    mode: z
      .enum(['auto', 'light', 'heavy'])
      .default('auto')
      .describe('Preset over scratchRemoval, fidelity and denoiseStrength; explicit values win.'),
  }),
  needs: { optionalBundles: ['photo-restoration', 'object-eraser-colorize', 'face-detection', 'upscale-enhance'] },
  execution: 'long',
  output: 'image in the input format',
  examples: ['old.jpg -o restored.jpg', 'old.jpg --mode heavy --colorize true'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const preset = s.mode === 'auto' ? undefined : PRESETS[s.mode];
    const scratchRemoval = s.scratchRemoval ?? preset?.scratchRemoval ?? true;
    const fidelity = s.fidelity ?? preset?.fidelity ?? 0.7;
    const denoiseStrength = s.denoiseStrength ?? preset?.denoiseStrength ?? 25;
    const img = await decodeRgb(input, ctx);
    const { width: W, height: H } = img;
    let rgb = img.rgb;
    const steps: Record<string, unknown>[] = [];
    const warnings: string[] = [];
    const call = (from: number, to: number) => ({
      dataDir: ctx.dataDir,
      signal: ctx.signal,
      progress: (f: number, stage?: string) => ctx.progress(from + f * (to - from), stage),
    });
    const [restoration, lama, ddcolor, faceDetection, gfpgan] = await Promise.all([
      hasModelFile(ctx.dataDir, 'photo-restoration', 'scratch-detection.onnx'),
      hasModelFile(ctx.dataDir, ERASER, LAMA_FILE),
      hasModelFile(ctx.dataDir, ERASER, DDCOLOR_FILE),
      isBundleInstalled(ctx.dataDir, 'face-detection'),
      hasModelFile(ctx.dataDir, 'upscale-enhance', GFPGAN_FILE),
    ]);

    if (scratchRemoval) {
      ctx.progress(5, 'finding scratches');
      const grey = new Uint8Array(W * H);
      for (let p = 0; p < W * H; p++) grey[p] = Math.round(0.299 * rgb[p * 3]! + 0.587 * rgb[p * 3 + 1]! + 0.114 * rgb[p * 3 + 2]!);
      let mask: Uint8Array;
      const step: Record<string, unknown> = { step: 'scratches' };
      if (restoration) {
        // Upstream's threshold is 0.4; fidelity moves it between 0.25 and 0.65.
        const r = await detectScratchesModel(grey, W, H, 0.25 + 0.4 * fidelity, call(5, 30));
        mask = r.mask;
        Object.assign(step, { detection: 'scratch-detection', detectionModel: r.info.model, detectionTiles: r.tiles });
      } else {
        mask = await detectScratchesClassical(grey, W, H, Math.round(18 + 40 * fidelity));
        Object.assign(step, { detection: 'classical', detectionModel: null });
      }
      mask = dilate(mask, W, H, 1);
      let pixels = 0;
      for (let p = 0; p < W * H; p++) pixels += mask[p]!;
      step.pixels = pixels;
      if (pixels && pixels < W * H) {
        const r = await inpaint(
          { width: W, height: H, rgb, mask },
          { method: lama ? 'lama' : 'patchmatch', model: 'lama-fp32', ...call(30, 60) },
        );
        rgb = r.rgb;
        Object.assign(step, { inpaint: r.method, inpaintModel: r.info?.model ?? null, tiles: r.tiles });
      }
      steps.push(step);
    }

    if (s.faceEnhancement) {
      if (faceDetection && gfpgan) {
        ctx.progress(60, 'finding faces');
        const faces = await detectFaces({ width: W, height: H, rgb }, { minConfidence: 0.5 }, call(60, 63));
        // fidelity 0 gives GFPGAN's face in full; 1 keeps half of the original.
        const strength = 1 - 0.5 * fidelity;
        const restored = await restoreFaces({ width: W, height: H, channels: 3, data: rgb }, faces, strength, call(63, 68));
        steps.push({
          step: 'faces',
          // No face found: GFPGAN did not run.
          method: restored.info ? 'gfpgan' : 'none',
          faces: faces.length,
          detector: faces.info.model,
          model: restored.info?.model ?? null,
          strength: +strength.toFixed(3),
        });
      } else {
        const lacking = [
          !faceDetection && 'face detection (face-detection bundle)',
          !gfpgan && 'GFPGAN (upscale-enhance bundle, by import)',
        ].filter(Boolean);
        const why = `face enhancement skipped: ${lacking.join(' and ')} not installed`;
        warnings.push(why);
        steps.push({ step: 'faces', skipped: true, reason: why });
      }
    }

    if (s.denoise && denoiseStrength > 0) {
      ctx.progress(68, 'denoising');
      // Non-local means (noise-removal's quick tier): σ measured on the photo, scaled by strength; fidelity keeps detail.
      const base = Math.max(0.5, noiseSigma(rgb, W, H, 3));
      const h = base * (denoiseStrength / 50) * (1.25 - 0.5 * fidelity);
      rgb = await nonLocalMeansOffThread(
        { px: Uint8Array.from(rgb), width: W, height: H, channels: 3, opts: { hLuma: h, hChroma: h, noise: base } },
        { signal: ctx.signal, progress: (f) => ctx.progress(68 + f * 2, 'denoising') },
      );
      steps.push({ step: 'denoise', method: 'non-local means', model: null, strength: denoiseStrength, sigma: +h.toFixed(2) });
    }

    if (s.colorize) {
      if (ddcolor) {
        const r = await colorizeDDColor({ width: W, height: H, rgb }, s.colorizeStrength / 100, call(70, 90));
        rgb = r.rgb;
        steps.push({ step: 'colorize', method: 'ddcolor', ...modelData(r.info), strength: s.colorizeStrength });
      } else {
        const why = 'colorize skipped: DDColor (object-eraser-colorize bundle) is not installed; `kiln features import FILE` installs it';
        warnings.push(why);
        steps.push({ step: 'colorize', skipped: true, reason: why });
      }
    }

    const out = await writeRgb(ctx, { ...img, rgb }, outFormat(input, 'auto'), 92);
    return {
      outputs: [out],
      data: { mode: s.mode, scratchRemoval, fidelity, denoiseStrength, steps, warnings },
    };
  },
});
