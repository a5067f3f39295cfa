/**
 * The part of onnxruntime-node's API kiln uses. The runtime is installed as a bundle, not an npm
 * dependency, so its types are declared here (they match onnxruntime-common 1.x).
 */
export interface OrtTensor {
  readonly data: Float32Array | Int32Array | Uint8Array | BigInt64Array | Uint16Array;
  readonly dims: readonly number[];
  readonly type: string;
}

export interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}

export interface OrtApi {
  Tensor: new (type: string, data: ArrayLike<number> | ArrayBufferView, dims: readonly number[]) => OrtTensor;
  InferenceSession: {
    create(path: string | Uint8Array, options?: Record<string, unknown>): Promise<OrtSession>;
  };
}
