/**
 * The daemon's memory (issue 17): resident set of an idle `kiln serve`, after a run of mixed image
 * requests, and the first-use cost of the engines it starts on demand.
 */
import sharp from 'sharp';
import type { ServeProcess } from './serve-process.js';

export interface ImageRequest {
  /** The tool's section in the URL (image when not given). */
  section?: string;
  tool: string;
  settings: Record<string, unknown>;
  file: Buffer;
  name: string;
  type: string;
}

/** A small mix of images and image tools, as a web front-end would send them. */
export async function mixedImageRequests(): Promise<ImageRequest[]> {
  const photo = (w: number, h: number) =>
    sharp({
      create: { width: w, height: h, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } },
    })
      .jpeg({ quality: 85 })
      .toBuffer();
  const [small, mid, big] = await Promise.all([photo(640, 480), photo(1600, 1200), photo(3000, 2000)]);
  const png = await sharp({ create: { width: 800, height: 600, channels: 4, background: { r: 20, g: 120, b: 200, alpha: 0.5 } } })
    .png()
    .toBuffer();
  const jpg = (file: Buffer, name: string) => ({ file, name, type: 'image/jpeg' });
  return [
    { tool: 'resize', settings: { width: 320 }, ...jpg(small, 'small.jpg') },
    { tool: 'resize', settings: { width: 800 }, ...jpg(big, 'big.jpg') },
    { tool: 'convert', settings: { format: 'webp' }, ...jpg(mid, 'mid.jpg') },
    { tool: 'convert', settings: { format: 'png' }, ...jpg(small, 'small.jpg') },
    { tool: 'rotate', settings: { angle: 90 }, ...jpg(mid, 'mid.jpg') },
    { tool: 'compress', settings: { quality: 70 }, ...jpg(big, 'big.jpg') },
    { tool: 'resize', settings: { width: 200 }, file: png, name: 'alpha.png', type: 'image/png' },
    { tool: 'convert', settings: { format: 'avif', quality: 50 }, ...jpg(small, 'small.jpg') },
  ];
}

/** One request through the HTTP API; throws unless the output came back. */
/** `url`: another service taking the same request (bench/http-floor.ts); the tool's route by default. */
export async function postTool(s: Pick<ServeProcess, 'base' | 'auth'>, r: ImageRequest, url?: string): Promise<number> {
  const form = new FormData();
  form.set('settings', JSON.stringify(r.settings));
  form.set('file', new Blob([new Uint8Array(r.file)], { type: r.type }), r.name);
  const res = await fetch(url ?? `${s.base}/api/v1/tools/${r.section ?? 'image'}/${r.tool}`, {
    method: 'POST',
    headers: s.auth,
    body: form,
  });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`${r.tool}: HTTP ${res.status} ${body.toString().slice(0, 200)}`);
  return body.length;
}

/** `n` requests cycling through `mix`, `connections` at a time. */
export async function runMix(s: ServeProcess, mix: ImageRequest[], n: number, connections = 2): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      for (let i = next++; i < n; i = next++) await postTool(s, mix[i % mix.length]!);
    }),
  );
}
