/**
 * Image statistics that drive image-enhancement: brightness percentiles, grey-world channel means,
 * mean saturation, sharpness (variance of the Laplacian) and noise (Immerkær 1996, "Fast noise variance
 * estimation", CVIU 64(2)). Computed on a downsampled copy so the cost does not grow with the image.
 */
export interface Analysis {
  meanLuma: number;
  lowLuma: number;
  highLuma: number;
  channelMeans: [number, number, number];
  meanSaturation: number;
  laplacianVariance: number;
  noiseSigma: number;
}

export function analyse(rgb: Uint8Array | Uint8ClampedArray, width: number, height: number, channels: number, clip = 0.005): Analysis {
  const n = width * height;
  const hist = new Float64Array(256);
  const gray = new Float32Array(n);
  let sr = 0,
    sg = 0,
    sb = 0,
    wsum = 0,
    sat = 0;
  for (let p = 0, i = 0; p < n; p++, i += channels) {
    const r = rgb[i]!,
      g = rgb[i + 1]!,
      b = rgb[i + 2]!;
    const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    gray[p] = y;
    hist[Math.round(y)]!++;
    const mx = Math.max(r, g, b);
    const mn = Math.min(r, g, b);
    sat += mx ? (mx - mn) / mx : 0;
    // Grey world on mid-tones only: clipped highlights and deep shadows carry no colour cast information.
    if (y > 20 && y < 235) {
      sr += r;
      sg += g;
      sb += b;
      wsum++;
    }
  }
  const pct = (q: number) => {
    let acc = 0;
    for (let v = 0; v < 256; v++) if ((acc += hist[v]!) >= q * n) return v;
    return 255;
  };
  let meanLuma = 0;
  for (let v = 0; v < 256; v++) meanLuma += v * hist[v]!;
  meanLuma /= n;
  let lap = 0,
    lap2 = 0,
    absN = 0,
    m = 0;
  for (let y = 1; y < height - 1; y++)
    for (let x = 1; x < width - 1; x++) {
      const p = y * width + x;
      const c = gray[p]!,
        up = gray[p - width]!,
        dn = gray[p + width]!,
        l = gray[p - 1]!,
        r = gray[p + 1]!;
      const L = up + dn + l + r - 4 * c;
      lap += L;
      lap2 += L * L;
      // Immerkær's mask [1 -2 1; -2 4 -2; 1 -2 1] cancels image structure and keeps the noise.
      const N = gray[p - width - 1]! + gray[p - width + 1]! + gray[p + width - 1]! + gray[p + width + 1]! - 2 * (up + dn + l + r) + 4 * c;
      absN += Math.abs(N);
      m++;
    }
  const mean = wsum ? [sr / wsum, sg / wsum, sb / wsum] : [128, 128, 128];
  return {
    meanLuma,
    lowLuma: pct(clip),
    highLuma: pct(1 - clip),
    channelMeans: mean as [number, number, number],
    meanSaturation: sat / n,
    laplacianVariance: m ? lap2 / m - (lap / m) ** 2 : 0,
    noiseSigma: m ? (Math.sqrt(Math.PI / 2) * absN) / (6 * m) : 0,
  };
}
