/**
 * 68-point face landmarks (the iBUG 300-W layout: jaw 0–16, brows 17–26, nose 27–35, eyes 36–47,
 * mouth 48–67), the network face-api ships, written on TensorFlow.js ops from its weights. Input: a
 * face crop padded to a square and resampled to 112×112, mean RGB subtracted, divided by 255; four
 * dense blocks of separable convolutions (112 → 7), a 7×7 average pool and one fully connected
 * layer give 68 (x, y) pairs relative to the square crop.
 */
import { KilnError } from '../../core/errors.js';
import { defineModel } from '../model.js';
import type { NamedTensorMap, Tensor, TfjsRuntime, TfModule } from '../runtimes/tfjs-types.js';
import { loadTfWeights, weight } from './tfjs-weights.js';

export const LANDMARKS_SIZE = 112;
const MANIFEST = 'face_landmark_68_model-weights_manifest.json';
const ID = 'face-landmarks-68';
const MEAN_RGB = [122.782, 117.001, 104.298];

export interface LandmarksInput {
  /** Side of each square crop (112 is the network's size; others are resampled). */
  size: number;
  count: number;
  /** `count` square RGB crops one after the other, size × size × 3 bytes each. */
  rgb: Uint8Array;
}

export interface LandmarksOutput {
  /** count × 68 × (x, y), each 0–1 relative to its square crop. */
  points: Float32Array;
}

interface State {
  tf: TfModule;
  w: NamedTensorMap;
}

function separable(tf: TfModule, w: NamedTensorMap, prefix: string, x: Tensor, stride: 1 | 2): Tensor {
  const g = (n: string) => weight(w, `${prefix}/${n}`, ID);
  return tf.add(tf.separableConv2d(x, g('depthwise_filter'), g('pointwise_filter'), stride, 'same'), g('bias'));
}

/** A dense block: four convolutions, each fed the sum of the ones before (the first one halves the size). */
function denseBlock(tf: TfModule, w: NamedTensorMap, prefix: string, x: Tensor, first: boolean): Tensor {
  const out1 = tf.relu(
    first
      ? tf.add(tf.conv2d(x, weight(w, `${prefix}/conv0/filters`, ID), 2, 'same'), weight(w, `${prefix}/conv0/bias`, ID))
      : separable(tf, w, `${prefix}/conv0`, x, 2),
  );
  const out2 = separable(tf, w, `${prefix}/conv1`, out1, 1);
  const out3 = separable(tf, w, `${prefix}/conv2`, tf.relu(tf.add(out1, out2)), 1);
  const out4 = separable(tf, w, `${prefix}/conv3`, tf.relu(tf.add(out1, tf.add(out2, out3))), 1);
  return tf.relu(tf.add(out1, tf.add(out2, tf.add(out3, out4))));
}

export default defineModel<LandmarksInput, LandmarksOutput, State>({
  id: ID,
  bundle: 'face-detection',
  runtime: 'tfjs',
  files: [MANIFEST, 'face_landmark_68_model.bin'],
  async load(ctx) {
    const { tf } = ctx.runtime as TfjsRuntime;
    return { tf, w: await loadTfWeights(tf, ctx, MANIFEST) };
  },
  async predict({ tf, w }, input, ctx) {
    const { size: S, count: n } = input;
    if (n === 0) return { points: new Float32Array(0) };
    if (input.rgb.length !== n * S * S * 3) throw new KilnError('INTERNAL', `${ID}: expected ${n} crops of ${S}×${S} RGB.`);
    ctx.progress(0.05, 'face landmarks');
    const out = tf.tidy(() => {
      const px = new Float32Array(input.rgb.length);
      for (let i = 0; i < px.length; i++) px[i] = (input.rgb[i]! - MEAN_RGB[i % 3]!) / 255;
      let x = tf.tensor(px, [n, S, S, 3], 'float32');
      if (S !== LANDMARKS_SIZE) x = tf.image.resizeBilinear(x, [LANDMARKS_SIZE, LANDMARKS_SIZE]);
      for (let b = 0; b < 4; b++) x = denseBlock(tf, w, `dense${b}`, x, b === 0);
      const pooled = tf.reshape(tf.avgPool(x, 7, 2, 'valid'), [n, -1]);
      return tf.add(tf.matMul(pooled, weight(w, 'fc/weights', ID)), weight(w, 'fc/bias', ID));
    });
    try {
      const points = Float32Array.from((await out.data()) as Float32Array);
      ctx.progress(1);
      return { points };
    } finally {
      out.dispose();
    }
  },
  async dispose({ tf, w }) {
    tf.dispose(w);
  },
});
