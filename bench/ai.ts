/**
 * AI: the model host's cold and warm cost. Background removal of a 1 MP photo (ISNet fp16 and the
 * quantized model) on this CPU: the first call loads the runtime and the model, later calls reuse
 * them (goal: ≤ 2 s warm). Upscaling 512×512 → 2048×2048 (×4) with the ESRGAN/RDN networks (slim and
 * medium, tiled, tfjs wasm) against sharp's Lanczos resize of the same image. The bundles install from the npm registry once (KILN_AI_CACHE_DIR keeps the
 * verified download). Other AI families add their cases here.
 */
import path from 'node:path';
import sharp from 'sharp';
import { findBundle } from '../src/ai/bundles/list.js';
import { modelHost } from '../src/ai/host/host.js';
import { installBundle } from '../src/ai/install/installer.js';
import { foregroundMatte } from '../src/ai/tasks/matte.js';
import { superResolve } from '../src/ai/tasks/upscale.js';
import { Bench, heavy, type BenchOptions, type FamilyResult } from './lib.js';

/** A 1 MP photo-like input: gradients, a subject-like ellipse and noise. */
async function photo(width: number, height: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#b8c4d8"/><stop offset="1" stop-color="#e8e0d0"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>
    <ellipse cx="${width / 2}" cy="${height * 0.38}" rx="${width * 0.12}" ry="${height * 0.17}" fill="#c89070"/>
    <rect x="${width * 0.3}" y="${height * 0.55}" width="${width * 0.4}" height="${height * 0.45}" rx="60" fill="#305080"/>
  </svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 90 }).toBuffer();
}

export async function benchAi(o: BenchOptions): Promise<FamilyResult> {
  const b = new Bench(o, 'ai');
  const dataDir = process.env.KILN_DATA_DIR ?? path.join(o.outDir, 'data');
  b.heading('install the background-removal bundle (from the verified cache after the first time)');
  await b.time(
    'install-background-removal',
    'install (or confirm) background-removal',
    () => installBundle(dataDir, findBundle('background-removal')!),
    {
      n: 1,
      warmup: false,
    },
  );
  const [w, h] = o.smoke ? [320, 240] : [1200, 840];
  const input = await photo(w, h);
  const matte = (model: 'isnet-fp16' | 'isnet-quint8') => () => foregroundMatte(sharp(input), { width: w, height: h }, model, { dataDir });
  b.heading(`background removal, ${w}×${h} JPEG (${((w * h) / 1e6).toFixed(1)} MP), mask at full size`);
  await modelHost.stop();
  await b.time('matte-fp16-cold', 'ISNet fp16, cold (runtime + model load)', matte('isnet-fp16'), { n: 1, warmup: false });
  await b.time('matte-fp16-warm', 'ISNet fp16, warm', matte('isnet-fp16'), heavy(o));
  if (!o.smoke) await b.time('matte-quint8-warm', 'ISNet quint8, warm', matte('isnet-quint8'), heavy(o));
  const warm = b.result.ms['matte-fp16-warm'];
  if (warm !== undefined)
    o.print(`  goal: ≤ 2000 ms warm — ${warm <= 2000 ? 'met' : `not met (${(warm / 2000).toFixed(1)}× the goal on this CPU)`}`);
  b.ratios([['matte-fp16-cold', 'matte-fp16-warm', 'what keeping the model warm saves']]);
  await modelHost.stop();

  b.heading('install the upscale-enhance bundle (from the verified cache after the first time)');
  await b.time(
    'install-upscale-enhance',
    'install (or confirm) upscale-enhance',
    () => installBundle(dataDir, findBundle('upscale-enhance')!),
    {
      n: 1,
      warmup: false,
    },
  );
  const side = o.smoke ? 128 : 512;
  const { data: rgb } = await sharp(await photo(side, side))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const up = (variant: 'slim' | 'medium') => () =>
    superResolve({ width: side, height: side, rgb: new Uint8Array(rgb) }, { scale: 4, variant }, { dataDir });
  b.heading(`upscale ×4, ${side}×${side} → ${side * 4}×${side * 4} (tiles from KILN_AI_TILE / KILN_AI_TILE_MB)`);
  await b.time('upscale-slim-cold', 'ESRGAN slim ×4, cold (runtime + model load)', up('slim'), { n: 1, warmup: false });
  await b.time('upscale-slim', 'ESRGAN slim ×4, warm', up('slim'), { n: 1, warmup: false });
  if (!o.smoke) await b.time('upscale-medium', 'ESRGAN medium ×4, warm', up('medium'), { n: 1, warmup: true });
  await b.time(
    'upscale-lanczos',
    'sharp Lanczos3 ×4',
    () =>
      sharp(rgb, { raw: { width: side, height: side, channels: 3 } })
        .resize(side * 4, side * 4, { kernel: 'lanczos3' })
        .raw()
        .toBuffer(),
    heavy(o),
  );
  b.ratios([
    ['upscale-slim', 'upscale-lanczos', 'what the network costs over Lanczos'],
    ...(o.smoke ? [] : ([['upscale-medium', 'upscale-slim', 'medium over slim']] as [string, string, string][])),
  ]);
  await modelHost.stop();
  return b.result;
}
