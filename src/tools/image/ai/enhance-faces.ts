import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { outputFile } from '../../_shared/output.js';
import { defineTool } from '../../../core/tool.js';
import { getSharp, writeImage } from '../../../engines/sharp.js';
import { GFPGAN_FILE } from '../../../ai/bundles/upscale-enhance.js';
import { restoreFaces } from '../../../ai/tasks/enhance-faces.js';
import { requireImportedFile } from '../../bundles.js';
import { decodeOriented, faceData, findFaces } from './face-common.js';

export default defineTool({
  id: 'enhance-faces',
  section: 'image',
  group: 'ai',
  summary: 'Restore and sharpen detected faces with a face-restoration model.',
  description:
    'Detects faces with the face-detection bundle (SSD MobileNet v1 + 68 landmarks), aligns each to the FFHQ 512×512 template from five landmark points, restores it with ' +
    'GFPGAN v1.4 (imported into the upscale-enhance bundle: it has no verifiable download) and warps it back through a feathered mask, so only the faces change. ' +
    'strength 0–1 blends the restored face over the original. sensitivity is the detector’s threshold; onlyCenterFace (alias centerFace) keeps the face nearest the centre. ' +
    'model auto = gfpgan; codeformer is not offered (its S-Lab licence forbids commercial use). Output PNG.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    model: z
      .enum(['auto', 'gfpgan', 'codeformer'])
      .default('auto')
      .describe('Enhancement model (auto = gfpgan; codeformer is not offered).'),
    strength: z.number().min(0).max(1).default(0.8).describe('Enhancement strength.'),
    sensitivity: z.number().min(0).max(1).default(0.5).describe('Face detection threshold.'),
    onlyCenterFace: z.boolean().optional().describe('Enhance only the most central face.'),
    centerFace: z.boolean().optional().describe('Catalog spelling of onlyCenterFace; onlyCenterFace wins if both are sent.'),
  }),
  check(s) {
    if (s.model === 'codeformer')
      return 'CodeFormer is not offered: its licence (S-Lab License 1.0) forbids commercial use. Use model gfpgan (or auto).';
  },
  needs: { bundles: ['upscale-enhance', 'face-detection'] },
  execution: 'long',
  output: 'PNG image',
  examples: ['old-portrait.jpg -o restored.png', 'group.jpg --strength 0.6 --sensitivity 0.4', 'team.jpg --only-center-face'],
  async run(ctx, { files }, s) {
    if (s.model === 'codeformer')
      throw new KilnError('VALIDATION_ERROR', 'CodeFormer is not offered (S-Lab licence, non-commercial); use gfpgan.');
    await requireImportedFile(ctx.dataDir, 'enhance-faces', 'upscale-enhance', GFPGAN_FILE, 'enhance-faces');
    const input = files[0]!;
    const img = await decodeOriented(input, ctx);
    let faces = await findFaces(img, s.sensitivity, ctx, 5, 35);
    const only = s.onlyCenterFace ?? s.centerFace ?? false;
    const all = faces;
    if (only && faces.length > 1) {
      const d = (f: (typeof faces)[number]) =>
        Math.hypot(f.box.x + f.box.width / 2 - img.width / 2, f.box.y + f.box.height / 2 - img.height / 2);
      const centre = [...faces].sort((a, b) => d(a) - d(b))[0]!;
      faces = Object.assign([centre], { info: all.info, landmarksInfo: all.landmarksInfo });
    }
    ctx.progress(40, 'restoring faces');
    const rgba = Buffer.from(img.rgba);
    const r = await restoreFaces({ width: img.width, height: img.height, channels: 4, data: rgba }, faces, s.strength, {
      dataDir: ctx.dataDir,
      signal: ctx.signal,
      progress: (f) => ctx.progress(40 + f * 45, 'restoring faces'),
    });
    const sharp = await getSharp();
    let out = sharp(rgba, { raw: { width: img.width, height: img.height, channels: 4 } });
    if (!img.hasAlpha) out = out.removeAlpha();
    ctx.progress(90, 'encoding');
    const dest = ctx.out('png');
    await writeImage(out, dest, 'png');
    const det = faceData(faces);
    // No face found: GFPGAN did not run and the image is unchanged; the data must not say otherwise.
    const ran = r.info !== undefined;
    return {
      outputs: [outputFile(dest)],
      data: {
        method: ran ? 'neural face restoration' : 'none',
        model: r.info?.model ?? null,
        ...(!ran && { note: 'No face was found at this sensitivity: the image is unchanged.' }),
        device: r.info?.device ?? det.device,
        provider: r.info?.provider ?? det.provider,
        faces: faces.length,
        detected: all.length,
        enhanced: r.pixels.filter((n) => n > 0).length,
        strength: s.strength,
        boxes: det.boxes,
        detector: { model: det.model, landmarksModel: det.landmarksModel, device: det.device, provider: det.provider },
      },
    };
  },
});
