/**
 * Face detector: SSD with a MobileNet v1 backbone (the WIDER FACE model face-api ships), written on
 * TensorFlow.js ops from its weights. Input: the image zero-padded at the right or bottom to a square
 * and resampled to 512×512, scaled to −1…1. Six feature maps (32² … 1²) predict 5118 anchor boxes
 * (centre offsets /10, log sizes /5) and a face logit each; boxes above the confidence threshold go
 * through greedy non-maximum suppression (IoU 0.5).
 */
import { defineModel } from '../model.js';
import type { NamedTensorMap, Tensor, TfjsRuntime, TfModule } from '../runtimes/tfjs-types.js';
import { loadTfWeights, weight } from './tfjs-weights.js';

export const SSD_SIZE = 512;
const MANIFEST = 'ssd_mobilenetv1_model-weights_manifest.json';
const ID = 'face-ssd-mobilenetv1';
const BN_EPSILON = 0.0010000000474974513;
const IOU_THRESHOLD = 0.5;

export interface FaceSsdInput {
  width: number;
  height: number;
  /** Interleaved RGB, width × height × 3 bytes. Best sent with its longer side at 512 (the network's size). */
  rgb: Uint8Array;
  /** Score threshold 0–1 (default 0.5). */
  minConfidence?: number;
  /** At most this many faces (default 100). */
  maxResults?: number;
}

export interface FaceSsdBox {
  /** In the input's pixels. */
  x: number;
  y: number;
  width: number;
  height: number;
  score: number;
}

export interface FaceSsdOutput {
  faces: FaceSsdBox[];
}

interface State {
  tf: TfModule;
  w: NamedTensorMap;
  /** Anchor boxes [ymin, xmin, ymax, xmax] × 5118, normalised. */
  anchors: Float32Array;
}

function pointwise(tf: TfModule, w: NamedTensorMap, prefix: string, x: Tensor, stride: 1 | 2): Tensor {
  const y = tf.conv2d(x, weight(w, `${prefix}/weights`, ID), stride, 'same');
  return tf.clipByValue(tf.add(y, weight(w, `${prefix}/convolution_bn_offset`, ID)), 0, 6);
}

function depthwise(tf: TfModule, w: NamedTensorMap, prefix: string, x: Tensor, stride: 1 | 2): Tensor {
  const g = (n: string) => weight(w, `${prefix}/${n}`, ID);
  const y = tf.depthwiseConv2d(x, g('depthwise_weights'), stride, 'same');
  const bn = tf.batchNorm(
    y,
    g('BatchNorm/moving_mean'),
    g('BatchNorm/moving_variance'),
    g('BatchNorm/beta'),
    g('BatchNorm/gamma'),
    BN_EPSILON,
  );
  return tf.clipByValue(bn, 0, 6);
}

function conv(tf: TfModule, w: NamedTensorMap, prefix: string, x: Tensor): Tensor {
  return tf.add(tf.conv2d(x, weight(w, `${prefix}/weights`, ID), 1, 'same'), weight(w, `${prefix}/biases`, ID));
}

/** The network: box encodings [5118, 4] and class logits [5118, 3] for a [1, 512, 512, 3] input in −1…1. */
function forward(tf: TfModule, w: NamedTensorMap, x: Tensor): { boxes: Tensor; classes: Tensor } {
  let out = pointwise(tf, w, 'MobilenetV1/Conv2d_0_pointwise', x, 2);
  let conv11 = out;
  for (let i = 1; i <= 13; i++) {
    out = depthwise(tf, w, `MobilenetV1/Conv2d_${i}_depthwise`, out, [2, 4, 6, 12].includes(i) ? 2 : 1);
    out = pointwise(tf, w, `MobilenetV1/Conv2d_${i}_pointwise`, out, 1);
    if (i === 11) conv11 = out;
  }
  const maps = [conv11, out];
  let p = out;
  for (let i = 0; i < 8; i++) {
    p = pointwise(tf, w, `Prediction/Conv2d_${i}_pointwise`, p, i % 2 ? 2 : 1);
    if (i % 2) maps.push(p);
  }
  const boxes: Tensor[] = [];
  const classes: Tensor[] = [];
  maps.forEach((m, i) => {
    boxes.push(tf.reshape(conv(tf, w, `Prediction/BoxPredictor_${i}/BoxEncodingPredictor`, m), [-1, 4]));
    classes.push(tf.reshape(conv(tf, w, `Prediction/BoxPredictor_${i}/ClassPredictor`, m), [-1, 3]));
  });
  return { boxes: tf.concat(boxes, 0), classes: tf.concat(classes, 0) };
}

function iou(b: Float32Array, i: number, j: number): number {
  const y0 = Math.max(b[i * 4]!, b[j * 4]!);
  const x0 = Math.max(b[i * 4 + 1]!, b[j * 4 + 1]!);
  const y1 = Math.min(b[i * 4 + 2]!, b[j * 4 + 2]!);
  const x1 = Math.min(b[i * 4 + 3]!, b[j * 4 + 3]!);
  const inter = Math.max(0, y1 - y0) * Math.max(0, x1 - x0);
  const area = (k: number) => (b[k * 4 + 2]! - b[k * 4]!) * (b[k * 4 + 3]! - b[k * 4 + 1]!);
  const union = area(i) + area(j) - inter;
  return union > 0 ? inter / union : 0;
}

/** Decodes the anchor-relative encodings into boxes [ymin, xmin, ymax, xmax] (normalised to the padded square). */
function decode(anchors: Float32Array, enc: Float32Array): Float32Array {
  const n = anchors.length / 4;
  const out = new Float32Array(n * 4);
  for (let i = 0; i < n; i++) {
    const a = i * 4;
    const ah = anchors[a + 2]! - anchors[a]!;
    const aw = anchors[a + 3]! - anchors[a + 1]!;
    const cy = anchors[a]! + ah / 2 + (enc[a]! / 10) * ah;
    const cx = anchors[a + 1]! + aw / 2 + (enc[a + 1]! / 10) * aw;
    const hh = (Math.exp(enc[a + 2]! / 5) * ah) / 2;
    const hw = (Math.exp(enc[a + 3]! / 5) * aw) / 2;
    out[a] = cy - hh;
    out[a + 1] = cx - hw;
    out[a + 2] = cy + hh;
    out[a + 3] = cx + hw;
  }
  return out;
}

export default defineModel<FaceSsdInput, FaceSsdOutput, State>({
  id: ID,
  bundle: 'face-detection',
  runtime: 'tfjs',
  files: [MANIFEST, 'ssd_mobilenetv1_model.bin'],
  async load(ctx) {
    const { tf } = ctx.runtime as TfjsRuntime;
    const w = await loadTfWeights(tf, ctx, MANIFEST);
    const anchors = weight(w, 'Output/extra_dim', ID).dataSync() as Float32Array;
    return { tf, w, anchors: Float32Array.from(anchors) };
  },
  async predict({ tf, w, anchors }, input, ctx) {
    const { width: W, height: H } = input;
    const side = Math.max(W, H);
    ctx.progress(0.05, 'detecting faces');
    const { boxes, classes } = tf.tidy(() => {
      let x = tf.tensor(Float32Array.from(input.rgb), [1, H, W, 3], 'float32');
      // Zero padding on the right or bottom keeps the image's top-left at the origin (as trained).
      if (W < side) x = tf.concat([x, tf.tensor(new Float32Array(H * (side - W) * 3), [1, H, side - W, 3])], 2);
      if (H < side) x = tf.concat([x, tf.tensor(new Float32Array((side - H) * side * 3), [1, side - H, side, 3])], 1);
      if (side !== SSD_SIZE) x = tf.image.resizeBilinear(x, [SSD_SIZE, SSD_SIZE]);
      return forward(tf, w, tf.sub(tf.div(x, 127.5), 1));
    });
    let enc: Float32Array;
    let logits: Float32Array;
    try {
      enc = (await boxes.data()) as Float32Array;
      logits = (await classes.data()) as Float32Array;
    } finally {
      tf.dispose([boxes, classes]);
    }
    ctx.signal.throwIfAborted();
    const min = input.minConfidence ?? 0.5;
    const max = input.maxResults ?? 100;
    const n = anchors.length / 4;
    const candidates: { i: number; score: number }[] = [];
    for (let i = 0; i < n; i++) {
      const score = 1 / (1 + Math.exp(-logits[i * 3 + 1]!));
      if (score > min) candidates.push({ i, score });
    }
    candidates.sort((a, b) => b.score - a.score);
    const decoded = decode(anchors, enc);
    const kept: { i: number; score: number }[] = [];
    for (const c of candidates) {
      if (kept.length >= max) break;
      if (kept.every((k) => iou(decoded, k.i, c.i) <= IOU_THRESHOLD)) kept.push(c);
    }
    const faces = kept.map(({ i, score }) => {
      const x0 = Math.max(0, decoded[i * 4 + 1]!) * side;
      const y0 = Math.max(0, decoded[i * 4]!) * side;
      const x1 = Math.min(1, decoded[i * 4 + 3]!) * side;
      const y1 = Math.min(1, decoded[i * 4 + 2]!) * side;
      const x = Math.min(x0, W);
      const y = Math.min(y0, H);
      return { x, y, width: Math.max(0, Math.min(x1, W) - x), height: Math.max(0, Math.min(y1, H) - y), score };
    });
    ctx.progress(1);
    return { faces: faces.filter((f) => f.width > 0 && f.height > 0) };
  },
  async dispose({ tf, w }) {
    tf.dispose(w);
  },
});
