/** Fixtures made by the tests themselves: images from sharp, in a temp dir removed after the suite. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import sharp from 'sharp';

/**
 * A directory removed after the suite. Its `after` hook runs before those the suite registers later
 * (node:test keeps their order), so a server a later hook closes may still be writing there (a watch
 * folder moving an original into .done/): the removal then failed with ENOTEMPTY, and a failing hook
 * skips the ones after it, which left the server running and the file waiting for its 25-minute
 * timeout. What cannot be removed yet goes when the file's process exits, after every hook.
 */
export function tempDir(prefix = 'kiln-fx-'): string {
  const dir = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  after(() => {
    try {
      remove();
    } catch {
      // A throw inside an 'exit' listener would turn a passing file into a failed one: last try, quietly.
      process.once('exit', () => {
        try {
          remove();
        } catch {
          /* left to the runner's own temp-dir sweep (scripts/test.mjs removes its home) */
        }
      });
    }
  });
  return dir;
}

/** A width×height image: left half red, right half blue (so crops and flips can be checked by pixel). */
export async function makeImage(
  dir: string,
  name: string,
  width = 200,
  height = 100,
  opts: { alpha?: boolean; format?: 'jpeg' | 'png' | 'webp' | 'gif' | 'tiff' | 'avif' } = {},
): Promise<string> {
  const channels = opts.alpha ? 4 : 3;
  const buf = Buffer.alloc(width * height * channels);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * channels;
      const left = x < width / 2;
      buf[i] = left ? 255 : 0;
      buf[i + 1] = 0;
      buf[i + 2] = left ? 0 : 255;
      if (opts.alpha) buf[i + 3] = 255;
    }
  const p = path.join(dir, name);
  const format =
    opts.format ??
    (name.endsWith('.png')
      ? 'png'
      : name.endsWith('.webp')
        ? 'webp'
        : name.endsWith('.gif')
          ? 'gif'
          : name.endsWith('.tiff')
            ? 'tiff'
            : 'jpeg');
  await sharp(buf, { raw: { width, height, channels } }).toFormat(format).toFile(p);
  return p;
}

/** A photo-like noisy image (compresses like a real photo, unlike flat colours). */
export async function makePhoto(dir: string, name: string, width = 1200, height = 800): Promise<string> {
  const buf = Buffer.alloc(width * height * 3);
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      buf[i] = (x * 255) / width + rnd() * 40;
      buf[i + 1] = (y * 255) / height + rnd() * 40;
      buf[i + 2] = 128 + Math.sin(x / 20) * 60 + rnd() * 40;
    }
  const p = path.join(dir, name);
  await sharp(buf, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 92 })
    .toFile(p);
  return p;
}
