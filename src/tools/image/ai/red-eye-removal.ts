import { z } from 'zod';
import { outputFile } from '../../_shared/output.js';
import { defineTool } from '../../../core/tool.js';
import { getSharp, normalizeFormat, sameFormatAs, supportsAlpha, writeImage } from '../../../engines/sharp.js';
import { decodeOriented, faceData, findFaces, pixelBox } from './face-common.js';

/** Faces for red-eye are found at the detector's usual threshold; sensitivity here is about red pixels. */
const FACE_THRESHOLD = 0.5;

/**
 * Red-pixel test: red over the mean of green and blue. sensitivity 0 needs red at 2.5× the others,
 * 100 flags anything at 1.2×; very dark pixels (red under 50) are left alone.
 */
export function rednessThreshold(sensitivity: number): number {
  return 2.5 - (sensitivity / 100) * 1.3;
}

export default defineTool({
  id: 'red-eye-removal',
  section: 'image',
  group: 'ai',
  summary: 'Find eyes via face landmarks and correct red-eye.',
  description:
    'Detects faces and their 68 landmarks (face-detection bundle), and only inside the region around each eye (an ellipse in the box ' +
    'the eye’s landmarks span, 1.5× its width) pulls red-dominant pixels toward the mean of their green and blue: the red pupil turns dark. ' +
    'sensitivity (0-100) lowers the red-over-green/blue ratio a pixel needs to be corrected; strength (0-100) is how far it is pulled. ' +
    'Nothing outside the eye regions changes. format overrides the output format (default: as the input).',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    sensitivity: z.number().min(0).max(100).default(50).describe('Red-pixel detection threshold (higher corrects less-red pixels too).'),
    strength: z.number().min(0).max(100).default(70).describe('Correction strength.'),
    format: z.enum(['png', 'jpeg', 'jpg', 'webp']).optional().describe('Optional output format override (default: the input’s format).'),
    quality: z.number().min(1).max(100).default(90).describe('Output encoding quality.'),
  }),
  needs: { bundles: ['face-detection'] },
  execution: 'long',
  output: 'image in the input format (or format)',
  examples: ['party.jpg -o party-fixed.jpg', 'flash.png --sensitivity 70 --strength 100 --format png -o fixed.png'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const img = await decodeOriented(input, ctx);
    const faces = await findFaces(img, FACE_THRESHOLD, ctx, 5, 70);
    ctx.progress(75, 'correcting');
    const rgba = Buffer.from(img.rgba);
    const threshold = rednessThreshold(s.sensitivity);
    const k = s.strength / 100;
    let corrected = 0;
    const regions = [];
    for (const f of faces) {
      for (const eye of [f.eyes.left, f.eyes.right]) {
        const box = pixelBox(eye, img.width, img.height);
        if (!box) continue;
        regions.push({ x: box.left, y: box.top, width: box.width, height: box.height });
        const cx = eye.x + eye.width / 2;
        const cy = eye.y + eye.height / 2;
        const rx = eye.width / 2;
        const ry = eye.height / 2;
        for (let y = box.top; y < box.top + box.height; y++) {
          for (let x = box.left; x < box.left + box.width; x++) {
            const dx = (x + 0.5 - cx) / rx;
            const dy = (y + 0.5 - cy) / ry;
            if (dx * dx + dy * dy > 1) continue;
            const i = (y * img.width + x) * 4;
            const r = rgba[i]!;
            const gb = (rgba[i + 1]! + rgba[i + 2]!) / 2;
            if (r < 50 || r < threshold * Math.max(gb, 1)) continue;
            rgba[i] = Math.round(r - k * (r - gb));
            corrected++;
          }
        }
      }
    }
    const format = s.format ? normalizeFormat(s.format) : sameFormatAs(input.type?.ext);
    const sharp = await getSharp();
    let out = sharp(rgba, { raw: { width: img.width, height: img.height, channels: 4 } });
    if (!img.hasAlpha || !supportsAlpha(format)) out = out.flatten({ background: '#ffffff' });
    const outPath = ctx.out(format);
    ctx.progress(90, 'encoding');
    // PNG's quality would mean palette quantisation (lossy everywhere); quality applies to the lossy formats.
    await writeImage(out, outPath, format, { quality: format === 'png' ? undefined : s.quality });
    return { outputs: [outputFile(outPath)], data: { ...faceData(faces), eyes: regions, correctedPixels: corrected } };
  },
});
