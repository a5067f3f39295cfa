import { z } from 'zod';
import { outputFile } from '../../_shared/output.js';
import { defineTool } from '../../../core/tool.js';
import { getSharp, sameFormatAs, supportsAlpha, writeImage } from '../../../engines/sharp.js';
import { decodeOriented, faceData, findFaces, pixelBox } from './face-common.js';

/** blurRadius is in pixels for a face 256 px high, and grows with larger faces, so one setting hides a face at any resolution. */
const REFERENCE_FACE = 256;

export default defineTool({
  id: 'blur-faces',
  section: 'image',
  group: 'ai',
  summary: 'Detect faces and blur them.',
  description:
    'Finds faces with the face-detection bundle (SSD MobileNet v1) and applies a Gaussian blur inside each detected face box; ' +
    'nothing outside the boxes changes. blurRadius is the blur radius in pixels for a face 256 px high, scaled up for larger faces. ' +
    'sensitivity is the detector’s score threshold: lower finds more (and less certain) faces. data.faces counts them.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    blurRadius: z.number().min(1).max(100).default(30).describe('Blur radius applied to faces.'),
    sensitivity: z.number().min(0).max(1).default(0.5).describe('Face detection threshold (detector score 0-1).'),
  }),
  needs: { bundles: ['face-detection'] },
  execution: 'long',
  output: 'image in the input format',
  examples: ['team.jpg -o team-blurred.jpg', 'crowd.png --blur-radius 60 --sensitivity 0.3 -o crowd-blurred.png'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const img = await decodeOriented(input, ctx);
    const faces = await findFaces(img, s.sensitivity, ctx, 5, 70);
    ctx.progress(75, 'blurring');
    const rgba = Buffer.from(img.rgba);
    let blurredCount = 0;
    for (const f of faces) {
      const box = pixelBox(f.box, img.width, img.height);
      if (!box) continue;
      const sigma = Math.max(0.3, (s.blurRadius / 2) * Math.max(1, box.height / REFERENCE_FACE));
      // Blur with the surroundings as context (no dark edge from padding), then keep only the box.
      const m = Math.ceil(sigma * 3);
      const outer = {
        left: Math.max(0, box.left - m),
        top: Math.max(0, box.top - m),
        width: 0,
        height: 0,
      };
      outer.width = Math.min(img.width, box.left + box.width + m) - outer.left;
      outer.height = Math.min(img.height, box.top + box.height + m) - outer.top;
      const blurred = await img
        .image()
        .extract(outer)
        .blur(sigma)
        .extract({ left: box.left - outer.left, top: box.top - outer.top, width: box.width, height: box.height })
        .raw()
        .toBuffer();
      for (let y = 0; y < box.height; y++) {
        blurred.copy(rgba, ((box.top + y) * img.width + box.left) * 4, y * box.width * 4, (y + 1) * box.width * 4);
      }
      blurredCount++;
    }
    const format = sameFormatAs(input.type?.ext);
    const sharp = await getSharp();
    let out = sharp(rgba, { raw: { width: img.width, height: img.height, channels: 4 } });
    if (!img.hasAlpha || !supportsAlpha(format)) out = out.flatten({ background: '#ffffff' });
    const outPath = ctx.out(format);
    ctx.progress(90, 'encoding');
    await writeImage(out, outPath, format, { quality: format === 'jpg' ? 92 : undefined });
    return { outputs: [outputFile(outPath)], data: { ...faceData(faces), blurred: blurredCount } };
  },
});
