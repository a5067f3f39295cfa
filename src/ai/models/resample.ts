/**
 * Bilinear sampling, the one implementation kiln's pixel code uses (resizing model inputs and outputs,
 * PatchMatch's upsampling, DDColor's chroma, face alignment): pixel centres at integer coordinates,
 * coordinates clamped to the edges.
 */

/**
 * The bilinear value at (x, y) of one channel, where pixel (i, j) is `src[(j * w + i) * stride + offset]`:
 * interleaved pixels have stride = channels and offset = the channel; a planar image stride 1 and offset
 * = the start of its plane.
 */
export function bilinearAt(src: ArrayLike<number>, w: number, h: number, stride: number, offset: number, x: number, y: number): number {
  const sx = Math.min(w - 1, Math.max(0, x));
  const sy = Math.min(h - 1, Math.max(0, y));
  const x0 = Math.floor(sx);
  const y0 = Math.floor(sy);
  const x1 = Math.min(w - 1, x0 + 1);
  const y1 = Math.min(h - 1, y0 + 1);
  const wx = sx - x0;
  const wy = sy - y0;
  const a = src[(y0 * w + x0) * stride + offset]!;
  const b = src[(y0 * w + x1) * stride + offset]!;
  const d = src[(y1 * w + x0) * stride + offset]!;
  const e = src[(y1 * w + x1) * stride + offset]!;
  return (a * (1 - wx) + b * wx) * (1 - wy) + (d * (1 - wx) + e * wx) * wy;
}

/** Bilinear resampling of interleaved 8-bit pixels (pixel centres aligned, edges clamped). */
export function resizeBilinear(src: Uint8Array, sw: number, sh: number, channels: number, dw: number, dh: number): Uint8Array {
  const dst = new Uint8Array(dw * dh * channels);
  const fx = sw / dw;
  const fy = sh / dh;
  for (let y = 0; y < dh; y++) {
    const sy = (y + 0.5) * fy - 0.5;
    for (let x = 0; x < dw; x++) {
      const sx = (x + 0.5) * fx - 0.5;
      for (let c = 0; c < channels; c++) dst[(y * dw + x) * channels + c] = Math.round(bilinearAt(src, sw, sh, channels, c, sx, sy));
    }
  }
  return dst;
}
