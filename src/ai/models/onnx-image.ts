/** RGB bytes ⇄ NCHW float tensors, for ONNX image-to-image networks. */

/** Interleaved RGB bytes → planar float32 (v / 255 − mean) / std, NCHW with N = 1. */
export function toPlanar(rgb: Uint8Array, width: number, height: number, mean = 0, std = 1): Float32Array {
  const n = width * height;
  const out = new Float32Array(3 * n);
  for (let p = 0, i = 0; p < n; p++, i += 3) {
    out[p] = (rgb[i]! / 255 - mean) / std;
    out[n + p] = (rgb[i + 1]! / 255 - mean) / std;
    out[2 * n + p] = (rgb[i + 2]! / 255 - mean) / std;
  }
  return out;
}

/** Planar float (x · std + mean, 0–1) → interleaved RGB floats 0–255, clamped. */
export function fromPlanar(planar: ArrayLike<number>, width: number, height: number, mean = 0, std = 1): Float32Array {
  const n = width * height;
  const out = new Float32Array(3 * n);
  for (let p = 0; p < n; p++) {
    for (let c = 0; c < 3; c++) {
      const v = (planar[c * n + p]! * std + mean) * 255;
      out[p * 3 + c] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  }
  return out;
}

/** `rgb` (w × h) padded by repeating its last row and column to pw × ph. */
export function padEdge(rgb: Uint8Array, w: number, h: number, pw: number, ph: number): Uint8Array {
  if (pw === w && ph === h) return rgb;
  const out = new Uint8Array(pw * ph * 3);
  for (let y = 0; y < ph; y++) {
    const sy = Math.min(y, h - 1);
    for (let x = 0; x < pw; x++) {
      const s = (sy * w + Math.min(x, w - 1)) * 3;
      const d = (y * pw + x) * 3;
      out[d] = rgb[s]!;
      out[d + 1] = rgb[s + 1]!;
      out[d + 2] = rgb[s + 2]!;
    }
  }
  return out;
}

/** The top-left w × h of an interleaved RGB float image pw wide. */
export function cropFloat(src: Float32Array, pw: number, w: number, h: number): Float32Array {
  if (pw === w) return src.length === w * h * 3 ? src : src.subarray(0, w * h * 3);
  const out = new Float32Array(w * h * 3);
  for (let y = 0; y < h; y++) out.set(src.subarray(y * pw * 3, (y * pw + w) * 3), y * w * 3);
  return out;
}
