/**
 * What the face tools (blur-faces, red-eye-removal, smart-crop, content-aware-resize's protectFaces)
 * share: the decoded, oriented image as raw RGBA, face detection on it, and the result data naming
 * the model that ran. Not a tool (it is not listed in ../list.ts).
 */
import type { Sharp } from 'sharp';
import type { InputFile, RunContext } from '../../../core/tool.js';
import { type DetectedFaces, detectFaces, type FaceBox } from '../../../ai/tasks/faces.js';
import { getSharp } from '../../../engines/sharp.js';
import { openInput } from '../_shared/b-decode.js';

export interface Decoded {
  width: number;
  height: number;
  /** Interleaved RGBA of the oriented image. */
  rgba: Buffer;
  hasAlpha: boolean;
  /** A fresh sharp pipeline over `rgba`. */
  image(): Sharp;
}

export async function decodeOriented(input: InputFile, ctx: RunContext): Promise<Decoded> {
  const sharp = await getSharp();
  const src = await openInput(input, ctx.workDir, ctx.signal);
  const meta = await src.metadata();
  const { data, info } = await src.autoOrient().ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    rgba: data,
    hasAlpha: Boolean(meta.hasAlpha),
    image: () => sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } }),
  };
}

/** `sensitivity` 0–1 is the detector's score threshold (the catalog's "face detection threshold"), kept inside 0.05–0.99. */
export function minConfidence(sensitivity: number): number {
  return Math.min(0.99, Math.max(0.05, sensitivity));
}

export async function findFaces(img: Decoded, sensitivity: number, ctx: RunContext, from: number, to: number): Promise<DetectedFaces> {
  ctx.progress(from, 'detecting faces');
  return detectFaces(
    img.image(),
    { minConfidence: minConfidence(sensitivity) },
    { dataDir: ctx.dataDir, signal: ctx.signal, progress: (f, stage) => ctx.progress(from + f * (to - from), stage) },
  );
}

const round = (b: FaceBox) => ({ x: Math.round(b.x), y: Math.round(b.y), width: Math.round(b.width), height: Math.round(b.height) });

/** Whole pixels covering `b` (rounded outward), inside the image; null when nothing is left. */
export function pixelBox(b: FaceBox, width: number, height: number): { left: number; top: number; width: number; height: number } | null {
  const left = Math.max(0, Math.floor(b.x));
  const top = Math.max(0, Math.floor(b.y));
  const right = Math.min(width, Math.ceil(b.x + b.width));
  const bottom = Math.min(height, Math.ceil(b.y + b.height));
  return right > left && bottom > top ? { left, top, width: right - left, height: bottom - top } : null;
}

/** `faces` count, the boxes, and the model, device and provider that ran (for a tool's result data). */
export function faceData(faces: DetectedFaces): Record<string, unknown> {
  return {
    faces: faces.length,
    boxes: faces.map((f) => ({ ...round(f.box), score: Math.round(f.score * 1000) / 1000 })),
    model: faces.info.model,
    device: faces.info.device,
    provider: faces.info.provider,
    ...(faces.landmarksInfo && { landmarksModel: faces.landmarksInfo.model }),
    warm: faces.info.warm,
    detectMs: faces.info.runMs + (faces.landmarksInfo?.runMs ?? 0),
  };
}
