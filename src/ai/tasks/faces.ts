/**
 * Faces in an image: boxes, scores, 68 landmarks and eye regions, in the image's pixels. The
 * detector sees the image with its longer side at 512 (its input size; sharp resamples it), and
 * the landmark network sees each face cropped from the full-resolution image, padded to a square
 * and resampled to 112×112. Both models run in the AI host.
 */
import type { Sharp } from 'sharp';
import { getSharp } from '../../engines/sharp.js';
import { LANDMARKS_SIZE, type LandmarksOutput } from '../models/face-landmarks-68.js';
import { SSD_SIZE, type FaceSsdOutput } from '../models/face-ssd.js';
import { type ModelCall, type RunInfo, runModel } from '../run-model.js';

export interface FaceBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Point {
  x: number;
  y: number;
}

export interface Face {
  box: FaceBox;
  /** Detector confidence 0–1. */
  score: number;
  /** 68 points (iBUG 300-W order: jaw 0–16, brows 17–26, nose 27–35, eyes 36–47, mouth 48–67). */
  landmarks: Point[];
  /** Regions around each eye from the landmarks; `left` is the eye on the image's left (points 36–41). */
  eyes: { left: FaceBox; right: FaceBox };
}

/** The faces, largest score first, with the detector's run info (`info`) and the landmark model's. */
export type DetectedFaces = Face[] & { info: RunInfo; landmarksInfo?: RunInfo };

/** A decoded image: a sharp pipeline (oriented as it should be seen) or raw interleaved RGB. */
export type FaceImage = Sharp | { width: number; height: number; rgb: Uint8Array };

export interface DetectOptions {
  /** Detector score threshold 0–1 (default 0.5). */
  minConfidence?: number;
  maxResults?: number;
}

export const DETECTOR_MODEL = 'face-ssd-mobilenetv1';
export const LANDMARKS_MODEL = 'face-landmarks-68';

interface Raw {
  width: number;
  height: number;
  rgb: Buffer;
}

async function toRaw(image: FaceImage): Promise<Raw> {
  if ('rgb' in image) {
    return { width: image.width, height: image.height, rgb: Buffer.from(image.rgb.buffer, image.rgb.byteOffset, image.rgb.byteLength) };
  }
  const { data, info } = await image.clone().toColourspace('srgb').removeAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.channels === 3) return { width: info.width, height: info.height, rgb: data };
  const n = info.width * info.height;
  const rgb = Buffer.alloc(n * 3);
  for (let p = 0; p < n; p++) {
    for (let c = 0; c < 3; c++) rgb[p * 3 + c] = data[p * info.channels + Math.min(c, info.channels - 1)]!;
  }
  return { width: info.width, height: info.height, rgb };
}

const u8 = (b: Buffer) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

function bounds(points: Point[]): FaceBox {
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y };
}

/** The region of one eye: centred on its six contour points, 1.5 × the eye's width wide, as high as it is wide. */
function eyeRegion(points: Point[], imgW: number, imgH: number): FaceBox {
  const b = bounds(points);
  const cx = points.reduce((s, p) => s + p.x, 0) / points.length;
  const cy = points.reduce((s, p) => s + p.y, 0) / points.length;
  const w = Math.max(b.width * 1.5, 2);
  const h = Math.max(w, b.height * 2);
  const x = Math.max(0, cx - w / 2);
  const y = Math.max(0, cy - h / 2);
  return { x, y, width: Math.min(imgW, cx + w / 2) - x, height: Math.min(imgH, cy + h / 2) - y };
}

export async function detectFaces(image: FaceImage, opts: DetectOptions, call: ModelCall): Promise<DetectedFaces> {
  const sharp = await getSharp();
  const raw = await toRaw(image);
  const { width: W, height: H } = raw;
  const k = Math.min(1, SSD_SIZE / Math.max(W, H));
  const sw = Math.max(1, Math.round(W * k));
  const sh = Math.max(1, Math.round(H * k));
  const rawImage = () => sharp(raw.rgb, { raw: { width: W, height: H, channels: 3 } });
  const small = k < 1 ? await rawImage().resize(sw, sh, { fit: 'fill' }).raw().toBuffer() : raw.rgb;
  const detect = await runModel<FaceSsdOutput>(
    DETECTOR_MODEL,
    { width: sw, height: sh, rgb: u8(Buffer.from(small)), minConfidence: opts.minConfidence ?? 0.5, maxResults: opts.maxResults ?? 100 },
    { ...call, progress: (f, s) => call.progress?.(f * 0.6, s) },
  );
  const boxes = detect.output.faces.map((f) => ({
    box: { x: f.x / k, y: f.y / k, width: f.width / k, height: f.height / k },
    score: f.score,
  }));
  if (!boxes.length) return Object.assign([] as Face[], { info: detect.info });

  // Each face cropped at full resolution (whole pixels inside the image), padded to a centred square.
  const S = LANDMARKS_SIZE;
  const crops = boxes.map(({ box }) => {
    const left = Math.max(0, Math.min(W - 1, Math.floor(box.x)));
    const top = Math.max(0, Math.min(H - 1, Math.floor(box.y)));
    const width = Math.max(1, Math.min(W - left, Math.round(box.width)));
    const height = Math.max(1, Math.min(H - top, Math.round(box.height)));
    return { left, top, width, height };
  });
  const pixels = await Promise.all(
    crops.map((c) =>
      rawImage()
        .extract(c)
        .resize(S, S, { fit: 'contain', position: 'centre', background: { r: 0, g: 0, b: 0 } })
        .raw()
        .toBuffer(),
    ),
  );
  const marks = await runModel<LandmarksOutput>(
    LANDMARKS_MODEL,
    { size: S, count: crops.length, rgb: u8(Buffer.concat(pixels)) },
    { ...call, progress: (f, s) => call.progress?.(0.6 + f * 0.4, s) },
  );
  const faces: Face[] = boxes.map(({ box, score }, i) => {
    const c = crops[i]!;
    const side = Math.max(c.width, c.height);
    const padX = (side - c.width) / 2;
    const padY = (side - c.height) / 2;
    const landmarks: Point[] = [];
    for (let p = 0; p < 68; p++) {
      const rx = marks.output.points[(i * 68 + p) * 2]!;
      const ry = marks.output.points[(i * 68 + p) * 2 + 1]!;
      landmarks.push({ x: c.left + rx * side - padX, y: c.top + ry * side - padY });
    }
    return {
      box,
      score,
      landmarks,
      eyes: { left: eyeRegion(landmarks.slice(36, 42), W, H), right: eyeRegion(landmarks.slice(42, 48), W, H) },
    };
  });
  return Object.assign(faces, { info: detect.info, landmarksInfo: marks.info });
}
