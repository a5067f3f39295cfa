/**
 * A tiny ONNX writer for tests: hand-encodes ModelProto / GraphProto / NodeProto / TensorProto /
 * ValueInfoProto (onnx.proto3 field numbers) with a minimal protobuf encoder (varints and
 * length-delimited fields), so tests build small networks with the inputs and outputs of the real
 * ones (GFPGAN 1×3×512×512, a dynamic-size denoiser) without downloading them.
 */

class Writer {
  private parts: Buffer[] = [];

  private varint(v: number | bigint): void {
    let n = BigInt(v);
    if (n < 0n) n += 1n << 64n;
    const bytes: number[] = [];
    do {
      let b = Number(n & 0x7fn);
      n >>= 7n;
      if (n > 0n) b |= 0x80;
      bytes.push(b);
    } while (n > 0n);
    this.parts.push(Buffer.from(bytes));
  }

  private key(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  int(field: number, v: number | bigint): this {
    this.key(field, 0);
    this.varint(v);
    return this;
  }

  bytes(field: number, b: Uint8Array): this {
    this.key(field, 2);
    this.varint(b.length);
    this.parts.push(Buffer.from(b));
    return this;
  }

  string(field: number, s: string): this {
    return this.bytes(field, Buffer.from(s, 'utf8'));
  }

  msg(field: number, m: Writer): this {
    return this.bytes(field, m.done());
  }

  float(field: number, v: number): this {
    this.key(field, 5);
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.parts.push(b);
    return this;
  }

  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const FLOAT = 1;
const INT64 = 7;

export interface Tensor {
  name: string;
  dims: number[];
  /** float32 values, or int64 when `int64` is set. */
  values: number[] | Float32Array;
  int64?: boolean;
}

export type Attr = { name: string } & ({ i: number } | { f: number } | { ints: number[] } | { floats: number[] } | { s: string });

export interface Node {
  op: string;
  inputs: string[];
  outputs: string[];
  attrs?: Attr[];
}

export interface Value {
  name: string;
  /** Numbers, or names for dynamic dimensions. */
  shape: (number | string)[];
}

function tensor(t: Tensor): Writer {
  const w = new Writer();
  for (const d of t.dims) w.int(1, d);
  w.int(2, t.int64 ? INT64 : FLOAT);
  w.string(8, t.name);
  const raw = t.int64 ? Buffer.alloc(8 * t.values.length) : Buffer.alloc(4 * t.values.length);
  for (const [i, v] of Array.from(t.values).entries()) {
    if (t.int64) raw.writeBigInt64LE(BigInt(v), i * 8);
    else raw.writeFloatLE(v, i * 4);
  }
  w.bytes(9, raw);
  return w;
}

function attr(a: Attr): Writer {
  const w = new Writer().string(1, a.name);
  if ('i' in a) w.int(3, a.i).int(20, 2);
  else if ('f' in a) w.float(2, a.f).int(20, 1);
  else if ('s' in a) w.string(4, a.s).int(20, 3);
  else if ('ints' in a) {
    for (const v of a.ints) w.int(8, v);
    w.int(20, 7);
  } else {
    for (const v of a.floats) w.float(7, v);
    w.int(20, 6);
  }
  return w;
}

function node(n: Node, i: number): Writer {
  const w = new Writer();
  for (const x of n.inputs) w.string(1, x);
  for (const x of n.outputs) w.string(2, x);
  w.string(3, `${n.op.toLowerCase()}_${i}`);
  w.string(4, n.op);
  for (const a of n.attrs ?? []) w.msg(5, attr(a));
  return w;
}

function valueInfo(v: Value): Writer {
  const shape = new Writer();
  for (const d of v.shape) shape.msg(1, typeof d === 'number' ? new Writer().int(1, d) : new Writer().string(2, d));
  const tensorType = new Writer().int(1, FLOAT).msg(2, shape);
  return new Writer().string(1, v.name).msg(2, new Writer().msg(1, tensorType));
}

/** An ONNX model (IR 8, opset 17) of `nodes` with `initializers`, one graph. */
export function onnxModel(g: { nodes: Node[]; initializers: Tensor[]; inputs: Value[]; outputs: Value[]; name?: string }): Buffer {
  const graph = new Writer();
  for (const [i, n] of g.nodes.entries()) graph.msg(1, node(n, i));
  graph.string(2, g.name ?? 'test');
  for (const t of g.initializers) graph.msg(5, tensor(t));
  for (const v of g.inputs) graph.msg(11, valueInfo(v));
  for (const v of g.outputs) graph.msg(12, valueInfo(v));
  return new Writer().int(1, 8).string(2, 'kiln-test').msg(7, graph).msg(8, new Writer().string(1, '').int(2, 17)).done();
}

/** Per-channel 3×3 convolution (group 3) with `kernel` (9 weights, row-major) for every channel, zero padding 1. */
export function depthwise3x3(kernel: number[]): Tensor {
  const values: number[] = [];
  for (let c = 0; c < 3; c++) values.push(...kernel);
  return { name: 'w', dims: [3, 1, 3, 3], values };
}

/**
 * A GFPGAN-shaped network: 1×3×512×512 → 1×3×512×512, here y = −x (a 1×1 convolution with −1 on
 * the diagonal), so in 0–255 terms the restored face is the negative of its crop: the −1…1
 * normalisation in and out is checked exactly.
 */
export function gfpganLike(): Buffer {
  return onnxModel({
    name: 'gfpgan-like',
    nodes: [{ op: 'Conv', inputs: ['input', 'w'], outputs: ['output'], attrs: [{ name: 'kernel_shape', ints: [1, 1] }] }],
    initializers: [{ name: 'w', dims: [3, 3, 1, 1], values: [-1, 0, 0, 0, -1, 0, 0, 0, -1] }],
    inputs: [{ name: 'input', shape: [1, 3, 512, 512] }],
    outputs: [{ name: 'output', shape: [1, 3, 512, 512] }],
  });
}

/**
 * A denoiser-shaped network: 1×3×H×W (dynamic) in 0–1 → the same shape, here a per-channel 3×3
 * box blur (Conv, group 3, pads 1) followed by Identity: a real, if crude, denoiser.
 */
export function denoiseLike(): Buffer {
  return onnxModel({
    name: 'denoise-like',
    nodes: [
      {
        op: 'Conv',
        inputs: ['input', 'w'],
        outputs: ['blurred'],
        attrs: [
          { name: 'group', i: 3 },
          { name: 'kernel_shape', ints: [3, 3] },
          { name: 'pads', ints: [1, 1, 1, 1] },
        ],
      },
      { op: 'Identity', inputs: ['blurred'], outputs: ['output'] },
    ],
    initializers: [depthwise3x3(new Array(9).fill(1 / 9))],
    inputs: [{ name: 'input', shape: [1, 3, 'height', 'width'] }],
    outputs: [{ name: 'output', shape: [1, 3, 'height', 'width'] }],
  });
}
