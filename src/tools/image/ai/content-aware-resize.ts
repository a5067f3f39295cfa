import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { getSharp, sameFormatAs, writeImage } from '../../../engines/sharp.js';
import { isBundleInstalled } from '../../bundles.js';
import { outputFile } from '../../_shared/output.js';
import type { SeamJob } from '../_shared/seam-worker.js';
import { openInput } from '../_shared/decode.js';
import { runWorker } from '../../../core/worker.js';
import { detectFaces, type FaceBox } from '../../../ai/tasks/faces.js';
import { faceData } from './face-common.js';

/**
 * Face protection without touching the carver: the energy map is the Sobel gradient of `grey`, so a
 * checkerboard of 2×2 blocks of extreme values written into a face box (in the grey copy only; the
 * pixels carved are the RGBA ones) gives it an energy no natural edge reaches, and seams go round it.
 * (Blocks of one pixel would not do: Sobel's central differences cancel on a period of 2.)
 */
const PROTECT_LEVEL = 65_535;

function protect(grey: Float32Array, w: number, h: number, b: FaceBox): void {
  const x0 = Math.max(0, Math.floor(b.x));
  const y0 = Math.max(0, Math.floor(b.y));
  const x1 = Math.min(w, Math.ceil(b.x + b.width));
  const y1 = Math.min(h, Math.ceil(b.y + b.height));
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) grey[y * w + x] = ((x >> 1) + (y >> 1)) % 2 ? PROTECT_LEVEL : 0;
}

/**
 * Seam carving is O(seams × pixels); above this many pixels the image is carved at a reduced size and
 * scaled to the exact target afterwards. Override with KILN_SEAM_MAX_PIXELS.
 */
const MAX_CARVE_PIXELS = Number(process.env.KILN_SEAM_MAX_PIXELS) || 2_000_000;

export default defineTool({
  id: 'content-aware-resize',
  section: 'image',
  group: 'ai',
  summary: 'Seam-carving resize that keeps important content; can protect detected faces.',
  description:
    'Removes the lowest-energy seams (paths of pixels across the image) until it reaches the target, so flat areas shrink and detailed ' +
    'ones keep their shape. Energy = Sobel gradient of the image blurred by blurRadius; gradients under sobelThreshold count as flat. ' +
    'width and/or height (only reductions), or square = the shorter side. Images above 2 MP are carved at a reduced size, then scaled ' +
    'to the exact target. protectFaces keeps seams out of the faces the face-detection bundle finds; without the bundle the run goes ahead ' +
    'and data.protectFaces says so.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    width: z.int().min(1).optional().describe('Target width in pixels (smaller than the image).'),
    height: z.int().min(1).optional().describe('Target height in pixels (smaller than the image).'),
    protectFaces: z.boolean().default(false).describe('Keep seams out of detected faces (needs the face-detection bundle).'),
    blurRadius: z.number().min(0).max(20).default(4).describe('Pre-blur for the energy map.'),
    sobelThreshold: z.number().min(1).max(20).default(2).describe('Edge detection threshold; higher is more aggressive.'),
    square: z.boolean().default(false).describe('Resize to a square using the smaller dimension.'),
  }),
  check: (s) => {
    if (s.width === undefined && s.height === undefined && !s.square) return 'content-aware-resize needs width, height or square.';
  },
  needs: { optionalBundles: ['face-detection'] },
  execution: 'long',
  output: 'image in the input format',
  examples: ['beach.jpg --width 800 -o narrow.jpg', 'banner.png --square -o square.png'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const sharp = await getSharp();
    const src = await openInput(input, ctx.workDir, ctx.signal);
    // The input's own alpha, read before ensureAlpha (whose output always has one): an opaque input
    // stays opaque, not a PNG with an alpha channel it never had.
    const inputHasAlpha = (await src.metadata()).hasAlpha;
    const { data: rgbaFull, info } = await src.autoOrient().ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const W = info.width;
    const H = info.height;
    let tw = s.square ? Math.min(W, H) : (s.width ?? W);
    let th = s.square ? Math.min(W, H) : (s.height ?? H);
    if (tw > W || th > H) {
      throw new KilnError(
        'VALIDATION_ERROR',
        `Seam carving only removes pixels: the image is ${W}×${H}, the target ${tw}×${th}. Use resize to enlarge.`,
      );
    }
    tw = Math.max(1, tw);
    th = Math.max(1, th);

    // Downscale guard: carve a smaller copy when the image is large.
    const k = Math.min(1, Math.sqrt(MAX_CARVE_PIXELS / (W * H)));
    const cw = Math.max(1, Math.round(W * k));
    const ch = Math.max(1, Math.round(H * k));
    const rgba =
      k < 1
        ? await sharp(rgbaFull, { raw: { width: W, height: H, channels: 4 } })
            .resize(cw, ch, { fit: 'fill' })
            .raw()
            .toBuffer()
        : rgbaFull;
    let greyImg = sharp(rgba, { raw: { width: cw, height: ch, channels: 4 } })
      .removeAlpha()
      .greyscale();
    if (s.blurRadius >= 0.3) greyImg = greyImg.blur(s.blurRadius);
    const greyBytes = await greyImg.raw().toBuffer();
    const grey = Float32Array.from(greyBytes);
    const targetW = Math.max(1, Math.round(tw * k));
    const targetH = Math.max(1, Math.round(th * k));

    let faces: Record<string, unknown> | undefined;
    if (s.protectFaces) {
      if (await isBundleInstalled(ctx.dataDir, 'face-detection')) {
        ctx.progress(2, 'detecting faces');
        const found = await detectFaces(
          sharp(rgbaFull, { raw: { width: W, height: H, channels: 4 } }),
          { minConfidence: 0.5 },
          { dataDir: ctx.dataDir, signal: ctx.signal },
        );
        for (const f of found) protect(grey, cw, ch, { x: f.box.x * k, y: f.box.y * k, width: f.box.width * k, height: f.box.height * k });
        faces = {
          requested: true,
          applied: true,
          ...faceData(found),
        };
      } else {
        faces = {
          requested: true,
          applied: false,
          reason:
            'The face-detection bundle is not installed (an admin installs it with POST /api/v1/admin/tools/content-aware-resize/features/install); seams were chosen from the energy map alone.',
        };
      }
    }

    ctx.progress(10, 'carving');
    const job: SeamJob = {
      plane: { width: cw, height: ch, rgba: new Uint8Array(rgba.buffer, rgba.byteOffset, rgba.byteLength), grey },
      targetWidth: targetW,
      targetHeight: targetH,
      sobelThreshold: s.sobelThreshold,
    };
    const result = await runWorker<CarveResult>(
      new URL('../_shared/seam-worker.js', import.meta.url),
      job,
      ctx.signal,
      'seam carving',
      (p) => ctx.progress(10 + p * 80, 'carving'),
    );

    let out = sharp(Buffer.from(result.rgba.buffer, result.rgba.byteOffset, result.rgba.byteLength), {
      raw: { width: result.width, height: result.height, channels: 4 },
    });
    if (result.width !== tw || result.height !== th) out = sharp(await out.resize(tw, th, { fit: 'fill' }).png().toBuffer());
    const format = sameFormatAs(input.type?.ext);
    if (!inputHasAlpha || format === 'jpg') out = out.flatten({ background: '#ffffff' });
    const outPath = ctx.out(format);
    await writeImage(out, outPath, format, { quality: format === 'jpg' ? 92 : undefined });
    return {
      outputs: [outputFile(outPath)],
      data: {
        width: tw,
        height: th,
        seamsRemoved: { vertical: cw - targetW, horizontal: ch - targetH },
        ...(k < 1
          ? {
              carvedAt: { width: cw, height: ch },
              note: `Carved at ${cw}×${ch} (downscale guard, ${MAX_CARVE_PIXELS} px) and scaled to the target.`,
            }
          : {}),
        removedColumns: result.removedColumns.length <= 4096 ? result.removedColumns : undefined,
        protectFaces: faces ?? { requested: false, applied: false },
        ...(faces?.applied ? { faces: faces.faces, model: faces.model, device: faces.device, provider: faces.provider } : {}),
      },
    };
  },
});

interface CarveResult {
  width: number;
  height: number;
  rgba: Uint8Array;
  removedColumns: number[];
}
