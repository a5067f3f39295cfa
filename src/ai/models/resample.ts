/** Bilinear resampling of interleaved 8-bit pixels (pixel centres aligned, edges clamped). */
export function resizeBilinear(src: Uint8Array, sw: number, sh: number, channels: number, dw: number, dh: number): Uint8Array {
  const dst = new Uint8Array(dw * dh * channels);
  const fx = sw / dw;
  const fy = sh / dh;
  for (let y = 0; y < dh; y++) {
    const sy = Math.min(sh - 1, Math.max(0, (y + 0.5) * fy - 0.5));
    const y0 = Math.floor(sy);
    const y1 = Math.min(sh - 1, y0 + 1);
    const wy = sy - y0;
    for (let x = 0; x < dw; x++) {
      const sx = Math.min(sw - 1, Math.max(0, (x + 0.5) * fx - 0.5));
      const x0 = Math.floor(sx);
      const x1 = Math.min(sw - 1, x0 + 1);
      const wx = sx - x0;
      for (let c = 0; c < channels; c++) {
        const a = src[(y0 * sw + x0) * channels + c]!;
        const b = src[(y0 * sw + x1) * channels + c]!;
        const d = src[(y1 * sw + x0) * channels + c]!;
        const e = src[(y1 * sw + x1) * channels + c]!;
        dst[(y * dw + x) * channels + c] = Math.round((a * (1 - wx) + b * wx) * (1 - wy) + (d * (1 - wx) + e * wx) * wy);
      }
    }
  }
  return dst;
}
