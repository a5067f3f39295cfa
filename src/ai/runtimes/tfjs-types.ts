/**
 * The part of TensorFlow.js's API kiln's models use. The runtime is installed as a bundle, not an
 * npm dependency, so its types are declared here (they match @tensorflow/tfjs-core 4.x).
 */
export interface Tensor {
  readonly shape: number[];
  readonly dtype: string;
  data(): Promise<Float32Array | Int32Array | Uint8Array>;
  dataSync(): Float32Array | Int32Array | Uint8Array;
  dispose(): void;
}

export type NamedTensorMap = Record<string, Tensor>;

export interface WeightsManifestEntry {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: string; scale?: number; min?: number };
}

export interface WeightsManifestGroup {
  paths: string[];
  weights: WeightsManifestEntry[];
}

type Pair = [number, number];
type Padding = 'same' | 'valid';

export interface TfModule {
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  enableProdMode(): void;
  getBackend(): string;
  tidy<T>(fn: () => T): T;
  dispose(t: Tensor | Tensor[] | NamedTensorMap): void;
  memory(): { numTensors: number; numBytes: number };
  tensor(values: ArrayLike<number> | ArrayBufferView, shape: number[], dtype?: string): Tensor;
  io: { decodeWeights(buffer: ArrayBuffer, specs: WeightsManifestEntry[]): NamedTensorMap };
  image: {
    resizeBilinear(x: Tensor, size: Pair, alignCorners?: boolean, halfPixelCenters?: boolean): Tensor;
    resizeNearestNeighbor(x: Tensor, size: Pair, alignCorners?: boolean, halfPixelCenters?: boolean): Tensor;
  };
  fused: {
    conv2d(args: {
      x: Tensor;
      filter: Tensor;
      strides: Pair | number;
      pad: Padding;
      dilations?: Pair | number;
      bias?: Tensor;
      activation?: 'linear' | 'relu';
    }): Tensor;
  };
  depthToSpace(x: Tensor, blockSize: number, dataFormat?: 'NHWC' | 'NCHW'): Tensor;
  cast(x: Tensor, dtype: string): Tensor;
  add(a: Tensor, b: Tensor | number): Tensor;
  sub(a: Tensor, b: Tensor | number): Tensor;
  mul(a: Tensor, b: Tensor | number): Tensor;
  div(a: Tensor, b: Tensor | number): Tensor;
  exp(x: Tensor): Tensor;
  sigmoid(x: Tensor): Tensor;
  relu(x: Tensor): Tensor;
  clipByValue(x: Tensor, min: number, max: number): Tensor;
  reshape(x: Tensor, shape: number[]): Tensor;
  concat(xs: Tensor[], axis: number): Tensor;
  slice(x: Tensor, begin: number[], size: number[]): Tensor;
  conv2d(x: Tensor, filter: Tensor, strides: Pair | number, pad: Padding): Tensor;
  depthwiseConv2d(x: Tensor, filter: Tensor, strides: Pair | number, pad: Padding): Tensor;
  separableConv2d(x: Tensor, depthwise: Tensor, pointwise: Tensor, strides: Pair | number, pad: Padding): Tensor;
  batchNorm(x: Tensor, mean: Tensor, variance: Tensor, offset: Tensor, scale: Tensor, epsilon: number): Tensor;
  avgPool(x: Tensor, filterSize: Pair | number, strides: Pair | number, pad: Padding): Tensor;
  matMul(a: Tensor, b: Tensor): Tensor;
}

/** What the tfjs runtime gives models (see tfjs.ts). */
export interface TfjsRuntime {
  tf: TfModule;
  /** tfjs-converter, for models shipped as TF.js graph models (model.json + shards). */
  converter: { loadGraphModel(url: unknown, options?: unknown): Promise<unknown> };
  backend: 'wasm' | 'cpu';
}
