/**
 * Images: kiln against sharp (the library it wraps), libvips' and ImageMagick's command lines.
 *   - resize a 12 MP JPEG to 800 px wide (in process, CLI, vipsthumbnail, ImageMagick),
 *   - convert a 2 MP JPEG to WebP and to AVIF at each encoder's default quality,
 *   - a batch of 20 JPEGs resized by one `kiln resize *.jpg -o out/` (both cores) against a shell loop,
 *   - CLI start-up: `kiln --version` and `kiln resize --help` against `node -e 0`.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { Bench, dir, have, heavy, kilnCli, kilnRun, requireOutput, sh, shAsync, type BenchOptions, type FamilyResult } from './lib.js';

const MAGICK = '/usr/bin/convert';

/** Smooth gradients plus noise: compresses and decodes like a real photo. */
async function makePhoto(p: string, width: number, height: number, seed = 7): Promise<string> {
  if (existsSync(p)) return p;
  const buf = Buffer.alloc(width * height * 3);
  for (let i = 0; i < buf.length; i += 3) {
    const x = (i / 3) % width;
    const y = Math.floor(i / 3 / width);
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const n = (seed >> 16) % 24;
    buf[i] = ((x * 255) / width + n) & 255;
    buf[i + 1] = ((y * 255) / height + n) & 255;
    buf[i + 2] = (128 + Math.sin(x / 50) * 80 + n) & 255;
  }
  await sharp(buf, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toFile(p + '.tmp');
  sh('mv', [p + '.tmp', p]);
  return p;
}

export interface ImageFixtures {
  big: string;
  /** WebP input. */
  medium: string;
  /** AVIF input: AV1 encoding is ~20x slower than WebP per pixel. */
  small: string;
  batchDir: string;
  batch: string[];
}

export async function imageFixtures(o: BenchOptions): Promise<ImageFixtures> {
  const fx = dir(o.fixDir, 'image');
  const [bw, bh, mw, mh, sw, sh_, count, cw, ch] = o.smoke
    ? [640, 480, 320, 240, 160, 120, 2, 200, 150]
    : [4000, 3000, 1280, 854, 640, 427, 20, 1600, 1200];
  const big = await makePhoto(path.join(fx, `photo-${bw}x${bh}.jpg`), bw, bh);
  const medium = await makePhoto(path.join(fx, `photo-${mw}x${mh}.jpg`), mw, mh, 11);
  const small = await makePhoto(path.join(fx, `photo-${sw}x${sh_}.jpg`), sw, sh_, 13);
  // Twenty distinct photos: crops at different places of the big one.
  const batchDir = dir(fx, `batch-${count}x${cw}`);
  const batch: string[] = [];
  for (let i = 0; i < count; i++) {
    const p = path.join(batchDir, `photo-${String(i + 1).padStart(2, '0')}.jpg`);
    if (!existsSync(p)) {
      const left = Math.floor(((bw - cw) * i) / Math.max(1, count - 1));
      const top = Math.floor(((bh - ch) * (i % 5)) / 4);
      await sharp(big).extract({ left, top, width: cw, height: ch }).jpeg({ quality: 90 }).toFile(p);
    }
    batch.push(p);
  }
  return { big, medium, small, batchDir, batch };
}

/** JPEG → WebP on the small photo: kiln in process, sharp, the CLI. The smoke test's case. */
async function convertCase(b: Bench, fx: ImageFixtures, format: 'webp' | 'avif', out: string): Promise<void> {
  const o = b.o;
  const medium = format === 'webp' ? fx.medium : fx.small;
  const label = format.toUpperCase();
  const reps = format === 'avif' ? heavy(o) : {};
  // Each at its encoder's defaults, which are kiln's defaults too (WebP q80 effort 4, AVIF q50 effort 4).
  const full = !o.smoke;
  if (full && format === 'webp' && !have('cwebp')) b.skip('cwebp', 'not installed');
  if (full && format === 'avif' && !have('avifenc')) b.skip('avifenc', 'not installed');
  await b.compare(
    [
      [
        `sharp-${format}`,
        `sharp direct → ${label}`,
        (i) => (format === 'webp' ? sharp(medium).webp() : sharp(medium).avif()).toFile(path.join(out, `s${i}.${format}`)),
      ],
      [`kiln-${format}`, `kiln runTool convert → ${label}`, () => kilnRun(o, 'convert', [medium], { format })],
      [
        `cli-${format}`,
        `kiln CLI convert → ${label}`,
        (i) => kilnCli(['convert', medium, '--format', format, '-o', path.join(out, `k${i}.${format}`), '-q']),
      ],
      full &&
        format === 'webp' &&
        have('cwebp') && ['cwebp', 'cwebp (libwebp CLI)', (i) => sh('cwebp', ['-quiet', medium, '-o', path.join(out, `c${i}.webp`)])],
      full &&
        format === 'avif' &&
        have('avifenc') && ['avifenc', 'avifenc (libavif CLI)', (i) => sh('avifenc', [medium, path.join(out, `a${i}.avif`)])],
      full && [
        `magick-${format}`,
        `ImageMagick convert → ${label}`,
        (i) => {
          const p = path.join(out, `m${i}.${format}`);
          sh(MAGICK, [medium, p]);
          requireOutput(p);
        },
      ],
    ],
    reps,
  );
  if (o.smoke) return b.ratios([[`kiln-${format}`, `sharp-${format}`, 'runTool overhead over the library']]);
  b.ratios([
    [`kiln-${format}`, `sharp-${format}`, 'runTool overhead over the library'],
    [`cli-${format}`, `sharp-${format}`],
    [`cli-${format}`, `magick-${format}`],
    ...(format === 'webp' ? [['cli-webp', 'cwebp'] as [string, string]] : [['cli-avif', 'avifenc'] as [string, string]]),
  ]);
}

async function resizeCase(b: Bench, fx: ImageFixtures, out: string): Promise<void> {
  const { big } = fx;
  // kiln's resize writes baseline libjpeg-turbo JPEG at quality 90; the others are asked for the same.
  await b.compare([
    [
      'sharp-resize',
      'sharp direct (in process)',
      (i) =>
        sharp(big)
          .resize({ width: 800 })
          .jpeg({ quality: 90 })
          .toFile(path.join(out, `s${i}.jpg`)),
    ],
    ['kiln-resize', 'kiln runTool (in process)', () => kilnRun(b.o, 'resize', [big], { width: 800 })],
    [
      'cli-resize',
      'kiln CLI (process per file)',
      (i) => kilnCli(['resize', big, '--width', '800', '-o', path.join(out, `k${i}.jpg`), '-q']),
    ],
    have('vipsthumbnail') && [
      'vipsthumbnail',
      'vipsthumbnail (libvips CLI)',
      (i) => sh('vipsthumbnail', [big, '-s', '800x', '-o', path.join(out, `v${i}.jpg[Q=90]`)]),
    ],
    [
      'magick-resize',
      'ImageMagick convert -resize',
      (i) => sh(MAGICK, [big, '-resize', '800x', '-quality', '90', path.join(out, `m${i}.jpg`)]),
    ],
  ]);
  b.ratios([
    ['kiln-resize', 'sharp-resize', 'runTool overhead over the library'],
    ['cli-resize', 'vipsthumbnail'],
    ['cli-resize', 'magick-resize'],
    ['cli-resize', 'sharp-resize', 'includes node + CLI start-up'],
  ]);
}

async function batchCase(b: Bench, fx: ImageFixtures, out: string): Promise<void> {
  const files = fx.batch;
  const fresh = (name: string) => {
    const d = path.join(out, name);
    rmSync(d, { recursive: true, force: true });
    return dir(d);
  };
  const count = (d: string) => {
    const got = readdirSync(d).length;
    if (got !== files.length) throw new Error(`${got} of ${files.length} outputs in ${d}`);
  };
  const reps = heavy(b.o);
  // Per batch, not per file: one number for the whole directory.
  await b.compare(
    [
      [
        'cli-batch',
        `kiln resize ${files.length} files -o out/ (both cores)`,
        async () => {
          const d = fresh('kb');
          await kilnCli(['resize', ...files, '--width', '800', '-o', d + '/', '-q']);
          count(d);
        },
      ],
      [
        'cli-batch-1',
        `  same with --concurrency 1`,
        async () => {
          const d = fresh('kb1');
          await kilnCli(['resize', ...files, '--width', '800', '-o', d + '/', '-q', '--concurrency', '1']);
          count(d);
        },
      ],
      [
        'magick-loop',
        `shell loop of ImageMagick (${files.length} processes)`,
        async () => {
          const d = fresh('mb');
          await shAsync('sh', [
            '-c',
            `for f in "$@"; do ${MAGICK} "$f" -resize 800x -quality 90 "${d}/$(basename "$f")"; done`,
            'sh',
            ...files,
          ]);
          count(d);
        },
      ],
      [
        'vips-loop',
        `shell loop of vips thumbnail (${files.length} processes)`,
        async () => {
          const d = fresh('vb');
          await shAsync('sh', [
            '-c',
            `for f in "$@"; do vips thumbnail "$f" "${d}/$(basename "$f")[Q=90]" 800 --height 100000; done`,
            'sh',
            ...files,
          ]);
          count(d);
        },
      ],
      [
        'vips-xargs',
        `vips thumbnail per file, xargs -P 2`,
        async () => {
          const d = fresh('vx');
          await shAsync('sh', [
            '-c',
            `printf '%s\\n' "$@" | xargs -P 2 -I{} sh -c 'vips thumbnail "$1" "$2/$(basename "$1")[Q=90]" 800 --height 100000' sh {} "${d}"`,
            'sh',
            ...files,
          ]);
          count(d);
        },
      ],
    ],
    reps,
  );
  b.ratios([
    ['cli-batch', 'magick-loop'],
    ['cli-batch', 'vips-loop'],
    ['cli-batch', 'vips-xargs', 'both sides on both cores'],
    ['cli-batch', 'cli-batch-1', 'gain from running inputs in parallel'],
  ]);
}

async function startupCase(b: Bench): Promise<void> {
  const n = b.o.quick ? 3 : b.o.n;
  await b.compare(
    [
      ['node', 'node -e 0', () => sh(process.execPath, ['-e', '0'])],
      ['kiln-version', 'kiln --version', () => kilnCli(['--version'])],
      ['kiln-help', 'kiln resize --help', () => kilnCli(['resize', '--help'])],
    ],
    { n },
  );
  b.ratios([
    ['kiln-version', 'node', 'start-up cost over a bare node'],
    ['kiln-help', 'node'],
  ]);
}

export async function benchImage(o: BenchOptions): Promise<FamilyResult> {
  const b = new Bench(o, 'image');
  const out = dir(o.outDir, 'image');
  const fx = await imageFixtures(o);
  // kiln sets libvips' thread pool to every core (src/engines/sharp.ts getSharp); sharp's own default on
  // glibc without jemalloc is 1 thread. Same setting for both sides, whichever runs first.
  sharp.concurrency(0);
  const size = async (p: string) => {
    const m = await sharp(p).metadata();
    return `${m.width}x${m.height}`;
  };
  b.heading(`JPEG → WebP (${await size(fx.medium)})`);
  await convertCase(b, fx, 'webp', out);
  if (o.smoke) return b.result;
  b.heading(`JPEG → AVIF (${await size(fx.small)})`);
  await convertCase(b, fx, 'avif', out);
  b.heading('resize 4000x3000 JPEG → 800 px wide');
  await resizeCase(b, fx, out);
  b.heading(`batch: resize ${fx.batch.length} JPEGs of 1600x1200 → 800 px wide (ms per whole batch)`);
  await batchCase(b, fx, out);
  b.heading('CLI start-up');
  await startupCase(b);
  return b.result;
}
