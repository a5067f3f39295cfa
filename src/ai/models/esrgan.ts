/**
 * Super-resolution with the networks UpscalerJS ships as "ESRGAN slim/medium" (RDN architecture,
 * Keras layers models converted to TF.js). tfjs-converter's loadGraphModel does not read Keras
 * *layers* models and tfjs-layers is not part of the runtime, so the model's own topology
 * (model.json `modelTopology.model_config`) is interpreted here on tfjs-core ops: Conv2D (fused
 * bias + ReLU), Activation, Concatenate, Add, UpSampling2D (nearest) and the PixelShuffle /
 * MultiplyBeta layers of UpscalerJS's other ESRGANs. Weights are read from the bundle's shard and
 * decoded with the manifest in model.json; nothing is fetched.
 *
 * Input and output are RGB 0–255, NHWC. The image is processed in tiles (tiles.ts) whose context
 * margin is the network's receptive radius, computed from the topology.
 */
import { readFile } from 'node:fs/promises';
import { KilnError } from '../../core/errors.js';
import { esrganFiles } from '../bundles/upscale-enhance.js';
import { defineModel } from '../model.js';
import type { NamedTensorMap, Tensor, TfjsRuntime, TfModule, WeightsManifestGroup } from '../runtimes/tfjs-types.js';
import { type RgbImage, runTiled, tileSide } from './tiles.js';

export type EsrganVariant = 'slim' | 'medium';
export const ESRGAN_SCALES = [2, 3, 4] as const;

export interface UpscaleInput extends RgbImage {
  /** Core tile side in input pixels (default from KILN_AI_TILE / KILN_AI_TILE_MB). */
  tile?: number;
  /** Feathered blend width across tile borders, input pixels (default 8). */
  overlap?: number;
}

export interface UpscaleOutput extends RgbImage {
  tiles: number;
  tile: number;
}

interface KerasLayer {
  class_name: string;
  name: string;
  config: Record<string, unknown>;
  inbound_nodes: [string, number, number, unknown][][];
}

interface ModelJson {
  modelTopology: { model_config: { config: { layers: KerasLayer[]; output_layers: [string, number, number][] } } };
  weightsManifest: WeightsManifestGroup[];
}

interface State {
  tf: TfModule;
  id: string;
  scale: number;
  layers: KerasLayer[];
  output: string;
  w: NamedTensorMap;
  /** Receptive radius in input pixels (context margin per tile). */
  radius: number;
  /** Rough peak bytes per input pixel (the widest concatenations and the upsampled maps). */
  bytesPerPixel: number;
}

const pair = (v: unknown): [number, number] => (Array.isArray(v) ? [Number(v[0]), Number(v[1])] : [Number(v), Number(v)]);

/** Receptive radius (input pixels) and peak memory per input pixel, from the layers. */
function measure(layers: KerasLayer[], scale: number): { radius: number; bytesPerPixel: number } {
  const radiusOf = new Map<string, number>();
  const scaleOf = new Map<string, number>();
  const channelsOf = new Map<string, number>();
  let widest = 0;
  for (const l of layers) {
    const ins = (l.inbound_nodes[0] ?? []).map((n) => n[0]);
    const r = Math.max(0, ...ins.map((n) => radiusOf.get(n) ?? 0));
    let s = Math.max(1, ...ins.map((n) => scaleOf.get(n) ?? 1));
    let ch = Math.max(0, ...ins.map((n) => channelsOf.get(n) ?? 3));
    let rr = r;
    if (l.class_name === 'InputLayer') ch = 3;
    else if (l.class_name === 'Conv2D') {
      const [kh] = pair(l.config.kernel_size);
      rr = r + (((kh - 1) / 2) * pair(l.config.dilation_rate ?? 1)[0]) / s;
      ch = Number(l.config.filters);
    } else if (l.class_name === 'Concatenate') ch = ins.reduce((n, x) => n + (channelsOf.get(x) ?? 0), 0);
    else if (l.class_name === 'UpSampling2D') s *= pair(l.config.size)[0];
    else if (l.class_name.startsWith('PixelShuffle')) {
      s *= scale;
      ch = Math.max(1, ch / (scale * scale));
    }
    radiusOf.set(l.name, rr);
    scaleOf.set(l.name, s);
    channelsOf.set(l.name, ch);
    widest = Math.max(widest, ch * s * s);
  }
  const radius = Math.ceil(Math.max(0, ...radiusOf.values())) + 1;
  // float32; the widest map, its input and the next one live at once.
  return { radius, bytesPerPixel: 4 * 3 * widest };
}

function forward(st: State, input: Tensor): Tensor {
  const { tf, w } = st;
  const get = (name: string) => {
    const t = w[name];
    if (!t) throw new KilnError('INTERNAL', `${st.id}: weight ${name} is missing from the bundle.`);
    return t;
  };
  const values = new Map<string, Tensor>();
  for (const l of st.layers) {
    const ins = (l.inbound_nodes[0] ?? []).map((n) => {
      const v = values.get(n[0]);
      if (!v) throw new KilnError('INTERNAL', `${st.id}: layer ${l.name} reads ${n[0]}, not computed yet.`);
      return v;
    });
    const c = l.config;
    let out: Tensor;
    switch (l.class_name) {
      case 'InputLayer':
        out = input;
        break;
      case 'Conv2D': {
        const act = c.activation === 'relu' ? 'relu' : 'linear';
        if (c.activation !== 'relu' && c.activation !== 'linear')
          throw new KilnError('INTERNAL', `${st.id}: activation ${c.activation} not supported.`);
        out = tf.fused.conv2d({
          x: ins[0]!,
          filter: get(`${l.name}/kernel`),
          bias: c.use_bias === false ? undefined : get(`${l.name}/bias`),
          strides: pair(c.strides ?? 1),
          pad: c.padding === 'valid' ? 'valid' : 'same',
          dilations: pair(c.dilation_rate ?? 1),
          activation: act,
        });
        break;
      }
      case 'Activation':
        if (c.activation === 'relu') out = tf.relu(ins[0]!);
        else if (c.activation === 'linear') out = ins[0]!;
        else throw new KilnError('INTERNAL', `${st.id}: activation ${c.activation} not supported.`);
        break;
      case 'Concatenate':
        out = tf.concat(ins, Number(c.axis ?? -1) === -1 ? 3 : Number(c.axis));
        break;
      case 'Add':
        out = ins.slice(1).reduce((a, b) => tf.add(a, b), ins[0]!);
        break;
      case 'UpSampling2D': {
        const [fy, fx] = pair(c.size);
        const x = ins[0]!;
        out = tf.image.resizeNearestNeighbor(x, [x.shape[1]! * fy, x.shape[2]! * fx]);
        break;
      }
      case 'MultiplyBeta':
        out = tf.mul(ins[0]!, 0.2);
        break;
      default:
        if (l.class_name.startsWith('PixelShuffle')) {
          out = tf.depthToSpace(ins[0]!, st.scale, 'NHWC');
          break;
        }
        throw new KilnError('INTERNAL', `${st.id}: layer type ${l.class_name} not supported.`);
    }
    values.set(l.name, out);
  }
  const y = values.get(st.output);
  if (!y) throw new KilnError('INTERNAL', `${st.id}: output ${st.output} not computed.`);
  return y;
}

function esrgan(variant: EsrganVariant, scale: number) {
  const id = `esrgan-${variant}-x${scale}`;
  const files = esrganFiles(variant, scale);
  return defineModel<UpscaleInput, UpscaleOutput, State>({
    id,
    bundle: 'upscale-enhance',
    runtime: 'tfjs',
    files: [files.topology, files.weights],
    async load(ctx) {
      const { tf } = ctx.runtime as TfjsRuntime;
      const json = JSON.parse(await readFile(ctx.file(files.topology), 'utf8')) as ModelJson;
      const bin = await readFile(ctx.file(files.weights));
      const buf = bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength) as ArrayBuffer;
      const specs = json.weightsManifest.flatMap((g) => g.weights);
      const w = tf.io.decodeWeights(buf, specs);
      const cfg = json.modelTopology.model_config.config;
      return { tf, id, scale, layers: cfg.layers, output: cfg.output_layers[0]![0], w, ...measure(cfg.layers, scale) };
    },
    async predict(st, input, ctx) {
      const { tf } = st;
      const tile = input.tile ?? tileSide(st.bytesPerPixel);
      const overlap = input.overlap ?? 8;
      let tiles = 0;
      const out = await runTiled(
        input,
        scale,
        { tile, overlap, margin: st.radius },
        async ({ region, count }) => {
          tiles = count;
          const y = tf.tidy(() => {
            const x = tf.tensor(Float32Array.from(region.rgb), [1, region.height, region.width, 3], 'float32');
            return tf.clipByValue(forward(st, x), 0, 255);
          });
          try {
            return Float32Array.from((await y.data()) as Float32Array);
          } finally {
            y.dispose();
          }
        },
        ctx,
      );
      return { ...out, tiles, tile };
    },
    async dispose({ tf, w }) {
      tf.dispose(w);
    },
  });
}

export const ESRGAN_MODELS = Object.fromEntries(
  (['slim', 'medium'] as const).flatMap((v) => ESRGAN_SCALES.map((s) => [`esrgan-${v}-x${s}`, esrgan(v, s)] as const)),
);
