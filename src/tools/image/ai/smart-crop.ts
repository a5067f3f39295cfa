import { z } from 'zod';
import type { Sharp } from 'sharp';
import { outputFile } from '../../_shared/output.js';
import { defineTool } from '../../../core/tool.js';
import type { DetectedFaces } from '../../../ai/tasks/faces.js';
import { getSharp, sameFormatAs, supportsAlpha, writeImage } from '../../../engines/sharp.js';
import { colorSchema, parseColor } from '../../_shared/color.js';
import { decodeOriented, type Decoded, faceData, findFaces } from './face-common.js';

interface Rect {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * Framing per facePreset: crop height as a multiple of the face box height, where the faces' centre
 * sits (fraction of the crop height from the top) and the aspect ratio used when width and height
 * are not both given.
 */
const PRESETS = {
  closeup: { scale: 1.8, centre: 0.45, aspect: 1 },
  'head-shoulders': { scale: 2.8, centre: 0.38, aspect: 4 / 5 },
  'upper-body': { scale: 4.2, centre: 0.3, aspect: 3 / 4 },
  'half-body': { scale: 6, centre: 0.24, aspect: 2 / 3 },
} as const;

/** Grows `r` by `pct` % of its size on every side, keeping its centre. */
function pad(r: Rect, pct: number): Rect {
  const f = 1 + (2 * pct) / 100;
  const width = r.width * f;
  const height = r.height * f;
  return { left: r.left + (r.width - width) / 2, top: r.top + (r.height - height) / 2, width, height };
}

/** Fits `r` inside the image: shrunk about its centre (keeping its aspect) when too large, then shifted in; whole pixels. */
function fitInside(r: Rect, W: number, H: number): Rect {
  const k = Math.min(1, W / r.width, H / r.height);
  const width = Math.max(1, Math.min(W, Math.round(r.width * k)));
  const height = Math.max(1, Math.min(H, Math.round(r.height * k)));
  const cx = r.left + r.width / 2;
  const cy = r.top + r.height / 2;
  const left = Math.min(W - width, Math.max(0, Math.round(cx - width / 2)));
  const top = Math.min(H - height, Math.max(0, Math.round(cy - height / 2)));
  return { left, top, width, height };
}

/** Size of the subject crop: width × height, a square of the one given, or a square of the shorter side. */
function subjectSize(img: Decoded, w?: number, h?: number): { w: number; h: number } {
  if (w && h) return { w, h };
  const side = w ?? h ?? Math.min(img.width, img.height);
  return { w: side, h: side };
}

/** sharp's attention/entropy crop of the image at the target aspect, as a rectangle of the source. */
async function subjectWindow(img: Decoded, w: number, h: number, strategy: 'attention' | 'entropy'): Promise<Rect> {
  const { info } = await img.image().resize(w, h, { fit: 'cover', position: strategy }).raw().toBuffer({ resolveWithObject: true });
  const scale = Math.max(w / img.width, h / img.height);
  return {
    left: Math.abs(info.cropOffsetLeft ?? 0) / scale,
    top: Math.abs(info.cropOffsetTop ?? 0) / scale,
    width: w / scale,
    height: h / scale,
  };
}

function faceWindow(faces: DetectedFaces, preset: keyof typeof PRESETS, aspect: number): Rect {
  const p = PRESETS[preset];
  const x0 = Math.min(...faces.map((f) => f.box.x));
  const y0 = Math.min(...faces.map((f) => f.box.y));
  const x1 = Math.max(...faces.map((f) => f.box.x + f.box.width));
  const y1 = Math.max(...faces.map((f) => f.box.y + f.box.height));
  const faceH = Math.max(...faces.map((f) => f.box.height));
  let height = p.scale * faceH;
  let width = height * aspect;
  // Several faces: wide or tall enough for all of them with a margin.
  if (width < (x1 - x0) * 1.3) {
    width = (x1 - x0) * 1.3;
    height = width / aspect;
  }
  if (height < (y1 - y0) * 1.3) {
    height = (y1 - y0) * 1.3;
    width = height * aspect;
  }
  const cx = (x0 + x1) / 2;
  const cy = (y0 + y1) / 2;
  return { left: cx - width / 2, top: cy - p.centre * height, width, height };
}

export default defineTool({
  id: 'smart-crop',
  section: 'image',
  group: 'ai',
  summary: 'Crop around the main subject, a detected face, or by trimming a plain border.',
  description:
    'mode subject: sharp’s attention (skin tones, saturation, edges) or entropy strategy picks the crop of width×height (a square of the side ' +
    'given, or of the shorter side, when not both are given). mode face: frames the detected face(s) (face-detection bundle) by facePreset — ' +
    'closeup, head-shoulders, upper-body or half-body — at width:height or the preset’s aspect; with no face found it falls back to subject ' +
    'and data.fallback says so. mode trim: removes a uniform border (colour of the top-left pixel, within threshold). padding adds that percentage ' +
    'of the crop on each side (inside the image for subject and face, in padColor for trim). padToSquare pads the result to a square in padColor; ' +
    'targetSize then scales it to that size (the longer side without padToSquare). The legacy modes attention and content mean subject and trim.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    mode: z
      .enum(['subject', 'face', 'trim', 'attention', 'content'])
      .default('subject')
      .describe('Crop mode: subject, face or trim (legacy values attention and content map to subject and trim).'),
    strategy: z.enum(['attention', 'entropy']).default('attention').describe('Subject-mode strategy.'),
    width: z.int().min(1).optional().describe('Output width.'),
    height: z.int().min(1).optional().describe('Output height.'),
    padding: z.int().min(0).max(50).default(0).describe('Padding around the subject, percent.'),
    facePreset: z
      .enum(['closeup', 'head-shoulders', 'upper-body', 'half-body'])
      .default('head-shoulders')
      .describe('closeup (headshot), head-shoulders (profile photo), upper-body (formal use), half-body (upper body in full).'),
    sensitivity: z.number().min(0).max(1).default(0.5).describe('Face detection threshold.'),
    threshold: z.int().min(0).max(255).default(30).describe('Background detection threshold (trim mode).'),
    padToSquare: z.boolean().default(false).describe('Pad the result to a square.'),
    padColor: colorSchema('#ffffff').describe('Padding color.'),
    targetSize: z.int().min(1).optional().describe('Target size in pixels of the padded output.'),
    quality: z.int().min(1).max(100).optional().describe('Output quality.'),
  }),
  needs: { optionalBundles: ['face-detection'], bundlesBySetting: { 'face-detection': { mode: ['face'] } } },
  execution: 'long',
  output: 'image in the input format',
  examples: [
    'photo.jpg --width 400 --height 400 -o thumb.jpg',
    'portrait.jpg --mode face --face-preset closeup -o headshot.jpg',
    'scan.png --mode trim --pad-to-square --target-size 512 -o product.png',
  ],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const sharp = await getSharp();
    const mode = s.mode === 'attention' ? 'subject' : s.mode === 'content' ? 'trim' : s.mode;
    const img = await decodeOriented(input, ctx);
    const bg = parseColor(s.padColor);
    const background = { r: bg.r, g: bg.g, b: bg.b, alpha: bg.alpha };
    const data: Record<string, unknown> = { mode };
    let out: Sharp;
    let crop: Rect;

    let faces: DetectedFaces | undefined;
    if (mode === 'face') {
      faces = await findFaces(img, s.sensitivity, ctx, 5, 60);
      Object.assign(data, faceData(faces));
    }
    ctx.progress(65, 'cropping');
    if (mode === 'trim') {
      const { info } = await img.image().trim({ threshold: s.threshold }).raw().toBuffer({ resolveWithObject: true });
      crop = { left: -(info.trimOffsetLeft ?? 0), top: -(info.trimOffsetTop ?? 0), width: info.width, height: info.height };
      out = img.image().extract(crop);
      if (s.padding) {
        const px = Math.round((crop.width * s.padding) / 100);
        const py = Math.round((crop.height * s.padding) / 100);
        out = sharp(await out.extend({ left: px, right: px, top: py, bottom: py, background }).raw().toBuffer(), {
          raw: { width: crop.width + 2 * px, height: crop.height + 2 * py, channels: 4 },
        });
      }
      if (s.width || s.height) out = out.resize(s.width, s.height, { fit: s.width && s.height ? 'contain' : 'inside', background });
    } else if (mode === 'face' && faces!.length) {
      const p = PRESETS[s.facePreset];
      const aspect = s.width && s.height ? s.width / s.height : p.aspect;
      crop = fitInside(pad(faceWindow(faces!, s.facePreset, aspect), s.padding), img.width, img.height);
      out = img.image().extract(crop);
      const w = s.width ?? (s.height ? Math.round(s.height * aspect) : undefined);
      const h = s.height ?? (s.width ? Math.round(s.width / aspect) : undefined);
      if (w && h) out = out.resize(w, h, { fit: 'fill' });
    } else {
      if (mode === 'face') data.fallback = 'subject';
      const { w, h } = subjectSize(img, s.width, s.height);
      crop = fitInside(pad(await subjectWindow(img, w, h, s.strategy), s.padding), img.width, img.height);
      out = img.image().extract(crop).resize(w, h, { fit: 'fill' });
    }
    data.crop = { x: crop.left, y: crop.top, width: crop.width, height: crop.height };

    // Materialise the crop so padding and scaling see its final size.
    let cur = await out.raw().toBuffer({ resolveWithObject: true });
    const raw = () => sharp(cur.data, { raw: { width: cur.info.width, height: cur.info.height, channels: 4 } });
    if (s.padToSquare && cur.info.width !== cur.info.height) {
      const side = Math.max(cur.info.width, cur.info.height);
      const dx = side - cur.info.width;
      const dy = side - cur.info.height;
      cur = await raw()
        .extend({ left: Math.floor(dx / 2), right: Math.ceil(dx / 2), top: Math.floor(dy / 2), bottom: Math.ceil(dy / 2), background })
        .raw()
        .toBuffer({ resolveWithObject: true });
    }
    if (s.targetSize) {
      const r = cur.info.width >= cur.info.height ? { width: s.targetSize } : { height: s.targetSize };
      cur = await raw().resize(r).raw().toBuffer({ resolveWithObject: true });
    }
    const format = sameFormatAs(input.type?.ext);
    let final = raw();
    const transparentPad = bg.alpha < 1 && (s.padToSquare || (mode === 'trim' && s.padding > 0));
    if (!supportsAlpha(format) || (!img.hasAlpha && !transparentPad)) final = final.flatten({ background: { r: bg.r, g: bg.g, b: bg.b } });
    const outPath = ctx.out(format);
    ctx.progress(90, 'encoding');
    await writeImage(final, outPath, format, { quality: s.quality });
    return { outputs: [outputFile(outPath)], data: { ...data, width: cur.info.width, height: cur.info.height } };
  },
});
