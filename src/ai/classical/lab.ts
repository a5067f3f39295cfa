/**
 * sRGB ↔ CIE L*a*b* (D65), in OpenCV's float convention (RGB 0–1; L 0–100, a and b about −128…127),
 * which the colorization networks were trained with.
 */
const XN = 0.950456;
const ZN = 1.088754;

const toLinear = (v: number) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
const fromLinear = (v: number) => (v <= 0.0031308 ? 12.92 * v : 1.055 * v ** (1 / 2.4) - 0.055);
const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
const finv = (t: number) => (t > 0.206893 ? t * t * t : (t - 16 / 116) / 7.787);

/** [L, a, b] of an 8-bit sRGB colour. */
export function rgbToLab(r8: number, g8: number, b8: number): [number, number, number] {
  const r = toLinear(r8 / 255);
  const g = toLinear(g8 / 255);
  const b = toLinear(b8 / 255);
  const x = (0.412453 * r + 0.35758 * g + 0.180423 * b) / XN;
  const y = 0.212671 * r + 0.71516 * g + 0.072169 * b;
  const z = (0.019334 * r + 0.119193 * g + 0.950227 * b) / ZN;
  const fy = f(y);
  return [y > 0.008856 ? 116 * fy - 16 : 903.3 * y, 500 * (f(x) - fy), 200 * (fy - f(z))];
}

/** 8-bit sRGB of L*a*b* (clamped). */
export function labToRgb(L: number, a: number, bb: number): [number, number, number] {
  const fy = (L + 16) / 116;
  const x = finv(fy + a / 500) * XN;
  const y = L > 7.9996 ? fy * fy * fy : L / 903.3;
  const z = finv(fy - bb / 200) * ZN;
  const r = 3.240479 * x - 1.53715 * y - 0.498535 * z;
  const g = -0.969256 * x + 1.875991 * y + 0.041556 * z;
  const b = 0.055648 * x - 0.204043 * y + 1.057311 * z;
  const q = (v: number) => Math.max(0, Math.min(255, Math.round(fromLinear(Math.max(0, Math.min(1, v))) * 255)));
  return [q(r), q(g), q(b)];
}
