import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { readRgba, writeRaw, type Raw } from '../_shared/pixels.js';

export default defineTool({
  id: 'compare',
  section: 'image',
  group: 'utilities',
  summary: 'Compare two images side by side, as an overlay or as a pixel-difference map with a similarity score.',
  description:
    'A pixel differs when the largest of its R, G, B, A differences exceeds diffThreshold. diff mode paints exactly those pixels pure red over a faded grey copy of the first image. ' +
    'When the sizes differ, the second image is stretched to the first one’s size for counting (data.resized says so). The data give the count, the percentage and the similarity.',
  input: {
    kind: 'file',
    accept: ['image/*'],
    extra: [
      { field: 'file', flag: 'target', accept: ['image/*'], required: true, description: 'the image to compare with (second "file" part)' },
    ],
  },
  frames: 'first',
  derivedOutput: true,
  settings: z.object({
    mode: z.enum(['side-by-side', 'overlay', 'diff']).default('diff').describe('Rendering of the comparison image.'),
    diffThreshold: z.number().min(0).max(255).default(10).describe('Per-pixel difference at or below which pixels count as equal.'),
  }),
  batch: false,
  output: 'PNG comparison image plus JSON data (differentPixels, differencePercent, similarity)',
  examples: ['before.png after.png --mode diff --diff-threshold 5 -o diff.png', 'a.jpg --target b.jpg --mode side-by-side --json'],
  async run(ctx, { files, extra }, s) {
    const aFile = files[0]!;
    const bFile = extra.file![0]!;
    const a = await readRgba(aFile, ctx.workDir);
    const bOrig = await readRgba(bFile, ctx.workDir);
    const resized = a.width !== bOrig.width || a.height !== bOrig.height;
    const b = resized ? await stretch(bOrig, a.width, a.height) : bOrig;
    ctx.progress(30, 'comparing');
    const n = a.width * a.height;
    const ad = a.data;
    const bd = b.data;
    const mask = new Uint8Array(n);
    let differing = 0;
    let maxDiff = 0;
    for (let p = 0, i = 0; p < n; p++, i += 4) {
      const d = Math.max(
        Math.abs(ad[i]! - bd[i]!),
        Math.abs(ad[i + 1]! - bd[i + 1]!),
        Math.abs(ad[i + 2]! - bd[i + 2]!),
        Math.abs(ad[i + 3]! - bd[i + 3]!),
      );
      if (d > maxDiff) maxDiff = d;
      if (d > s.diffThreshold) {
        mask[p] = 1;
        differing++;
      }
    }
    let image: Raw;
    if (s.mode === 'diff') {
      const out = new Uint8ClampedArray(n * 4);
      for (let p = 0, i = 0; p < n; p++, i += 4) {
        if (mask[p]) out.set([255, 0, 0, 255], i);
        else {
          // Faded grey (r = g = b) can never be mistaken for a marked pixel.
          const g = 200 + 0.2 * (0.299 * ad[i]! + 0.587 * ad[i + 1]! + 0.114 * ad[i + 2]!);
          out[i] = out[i + 1] = out[i + 2] = g;
          out[i + 3] = 255;
        }
      }
      image = { data: out, width: a.width, height: a.height };
    } else if (s.mode === 'overlay') {
      const out = new Uint8ClampedArray(n * 4);
      for (let i = 0; i < out.length; i++) out[i] = (ad[i]! + bd[i]!) / 2;
      image = { data: out, width: a.width, height: a.height };
    } else {
      image = sideBySide(a, bOrig);
    }
    const percent = (100 * differing) / n;
    const output = await writeRaw(ctx, image, 'png', `-${s.mode}`);
    return {
      outputs: [output],
      data: {
        mode: s.mode,
        diffThreshold: s.diffThreshold,
        width: a.width,
        height: a.height,
        secondWidth: bOrig.width,
        secondHeight: bOrig.height,
        resized,
        ...(resized
          ? {
              note: `The images differ in size; the second (${bOrig.width}×${bOrig.height}) was stretched to ${a.width}×${a.height} for the comparison.`,
            }
          : {}),
        totalPixels: n,
        differentPixels: differing,
        differencePercent: +percent.toFixed(4),
        similarity: +(100 - percent).toFixed(4),
        maxChannelDifference: maxDiff,
        identical: differing === 0 && !resized,
      },
    };
  },
});

async function stretch(r: Raw, width: number, height: number): Promise<Raw> {
  const sharp = await getSharp();
  const data = await sharp(Buffer.from(r.data.buffer, r.data.byteOffset, r.data.length), {
    raw: { width: r.width, height: r.height, channels: 4 },
  })
    .resize({ width, height, fit: 'fill' })
    .raw()
    .toBuffer();
  return { data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width, height };
}

/** Both images at their own size, top-aligned, with an 8 px white gutter. */
function sideBySide(a: Raw, b: Raw): Raw {
  const gap = 8;
  const width = a.width + gap + b.width;
  const height = Math.max(a.height, b.height);
  const out = new Uint8ClampedArray(width * height * 4).fill(255);
  for (let y = 0; y < a.height; y++) out.set(a.data.subarray(y * a.width * 4, (y + 1) * a.width * 4), y * width * 4);
  for (let y = 0; y < b.height; y++) out.set(b.data.subarray(y * b.width * 4, (y + 1) * b.width * 4), (y * width + a.width + gap) * 4);
  return { data: out, width, height };
}
