import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import type { InputFile, RunContext } from '../../../core/tool.js';
import { defineTool } from '../../../core/tool.js';
import { getPdfLib } from '../../../engines/pdf-lib.js';
import { decodesFully } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { checkAbort } from '../_shared/cancel.js';
import { openInput } from '../_shared/decode.js';
import { isSrgbProfile } from '../_shared/icc.js';

/** Page sizes in PDF points (1/72 in), portrait. */
const PAGE_SIZES = { A4: [595.28, 841.89], Letter: [612, 792], A3: [841.89, 1190.55], A5: [419.53, 595.28] } as const;
/** Recompression ladder for targetSize: JPEG quality, then the longest side in pixels. */
const LADDER: { quality: number; maxSide?: number }[] = [
  { quality: 85 },
  { quality: 70 },
  { quality: 55 },
  { quality: 55, maxSide: 2400 },
  { quality: 45, maxSide: 1600 },
  { quality: 40, maxSide: 1200 },
  { quality: 35, maxSide: 800 },
  { quality: 30, maxSide: 600 },
  { quality: 25, maxSide: 400 },
];

interface Embedded {
  bytes: Uint8Array;
  kind: 'jpg' | 'png';
  width: number;
  height: number;
}

export default defineTool({
  id: 'image-to-pdf',
  section: 'image',
  group: 'optimization',
  summary: 'Place one or more images on PDF pages; base tool of the image-to-PDF presets.',
  description:
    'One image per page (each page of a multi-page TIFF too), fitted inside the margins and centered. JPEGs in sRGB (or untagged) are embedded as they are (no re-encoding); other images (CMYK, a wide-gamut ICC profile such as Display P3, an EXIF rotation, other formats) as lossless PNG converted to sRGB. ' +
    'With targetSize, images are re-encoded as JPEG with falling quality, then smaller pixel sizes, until the PDF fits; data.targetMet says whether it did.',
  input: { kind: 'files', accept: ['image/*'], min: 1, max: 500 },
  // Each TIFF page is a page; an animation becomes one page, its first frame.
  frames: (f) => f.type?.ext !== 'tiff',
  settings: z.object({
    pageSize: z.enum(['A4', 'Letter', 'A3', 'A5']).default('A4').describe('Page size.'),
    orientation: z.enum(['portrait', 'landscape']).default('portrait').describe('Page orientation.'),
    margin: z.number().min(0).max(500).default(20).describe('Page margin in points.'),
    targetSize: z
      .object({ value: z.number().positive(), unit: z.enum(['KB', 'MB']).default('KB') })
      .strict()
      .optional()
      .describe('Maximum output size {value, unit}; images are recompressed to fit.'),
  }),
  check: (s) => {
    const [w, h] = PAGE_SIZES[s.pageSize];
    if (2 * s.margin >= Math.min(w, h))
      return `margin ${s.margin} leaves no room on a ${s.pageSize} page (at most ${Math.floor(Math.min(w, h) / 2) - 1} pt).`;
  },
  batch: false,
  output: 'PDF, one image per page',
  examples: [
    'scan1.jpg scan2.png --page-size Letter --margin 36 -o scans.pdf',
    '*.jpg --target-size \'{"value":500,"unit":"KB"}\' -o small.pdf',
  ],
  async run(ctx, { files }, s) {
    let [pw, ph] = PAGE_SIZES[s.pageSize] as readonly [number, number];
    if (s.orientation === 'landscape') [pw, ph] = [ph, pw];
    const limit = s.targetSize ? s.targetSize.value * (s.targetSize.unit === 'MB' ? 1024 * 1024 : 1024) : Infinity;
    const counts = await pageCounts(ctx, files);
    const original = (await Promise.all(files.map((f, i) => preparePages(ctx, f, counts[i]!)))).flat();
    let bytes = await build(original, pw, ph, s.margin);
    let step = -1;
    while (bytes.length > limit && step < LADDER.length - 1) {
      checkAbort(ctx.signal);
      step++;
      ctx.progress(20 + (70 * step) / LADDER.length, 'recompressing');
      const imgs = (await Promise.all(files.map((f, i) => preparePages(ctx, f, counts[i]!, LADDER[step])))).flat();
      bytes = await build(imgs, pw, ph, s.margin);
    }
    const out = ctx.out('pdf');
    await writeFile(out, bytes);
    return {
      outputs: [outputFile(out)],
      data: {
        pages: original.length,
        pageSize: s.pageSize,
        orientation: s.orientation,
        pageWidthPt: pw,
        pageHeightPt: ph,
        bytes: bytes.length,
        ...(s.targetSize
          ? {
              targetBytes: limit,
              targetMet: bytes.length <= limit,
              recompressed: step >= 0,
              ...(step >= 0 ? { jpegQuality: LADDER[step]!.quality, maxSide: LADDER[step]!.maxSide ?? null } : {}),
            }
          : {}),
      },
    };
  },
});

type Recompress = { quality: number; maxSide?: number };

/**
 * Every page of a multi-page TIFF (a scanned document, a fax) becomes a page of its own: tiff-to-pdf
 * kept only the first and dropped the rest without a word. Other images are one page (a GIF's first frame).
 */
async function preparePages(ctx: RunContext, f: InputFile, pages: number, recompress?: Recompress): Promise<Embedded[]> {
  if (pages === 1) return [await prepare(ctx, f, recompress)];
  const out: Embedded[] = [];
  // One page at a time: a long scan decoded all at once would hold every page in memory together.
  for (let page = 0; page < pages; page++) {
    checkAbort(ctx.signal);
    out.push(await prepare(ctx, f, recompress, page));
  }
  return out;
}

const MAX_PAGES = 500;

/**
 * Pages per input, counted before any is decoded. The limit is on the whole PDF: checked per file,
 * a request of several 499-page TIFFs made a PDF of thousands of pages.
 */
async function pageCounts(ctx: RunContext, files: InputFile[]): Promise<number[]> {
  const counts = await Promise.all(
    files.map(async (f) => (f.type?.ext === 'tiff' ? ((await (await openInput(f, ctx.workDir)).metadata()).pages ?? 1) : 1)),
  );
  const total = counts.reduce((a, b) => a + b, 0);
  if (total > MAX_PAGES) {
    const i = counts.indexOf(Math.max(...counts));
    throw new KilnError('LIMIT_EXCEEDED', `These inputs have ${total} pages together; a PDF is made of at most ${MAX_PAGES}.`, {
      details: { pages: total, limit: MAX_PAGES, largest: { file: files[i]!.name, pages: counts[i] } },
    });
  }
  return counts;
}

async function prepare(ctx: RunContext, f: InputFile, recompress?: Recompress, page?: number): Promise<Embedded> {
  const img = await openInput(f, ctx.workDir, ctx.signal, page === undefined ? {} : { page });
  const meta = await img.metadata();
  const upright = (meta.orientation ?? 1) === 1;
  // A PDF shows embedded JPEG pixels as DeviceRGB, i.e. sRGB, and ignores the JPEG's own ICC profile: a
  // Display P3 or Adobe RGB photo (phones, cameras) passed through came out dull and shifted, so those are
  // converted to sRGB like every other input.
  if (!recompress && f.type?.ext === 'jpg' && upright && meta.space !== 'cmyk' && isSrgbProfile(meta.icc)) {
    // Embedded without decoding, a damaged JPEG made a PDF with a broken picture where every other tool
    // refuses it: it must decode to the end first.
    if (!(await decodesFully(f.bytes ?? f.path, 'jpg')))
      throw new KilnError('UNSUPPORTED_INPUT', `The input ${f.name} could not be decoded (it is damaged or truncated).`);
    return { bytes: await readFile(f.path), kind: 'jpg', width: meta.width!, height: meta.height! };
  }
  img.autoOrient();
  if (recompress) {
    if (recompress.maxSide) img.resize({ width: recompress.maxSide, height: recompress.maxSide, fit: 'inside', withoutEnlargement: true });
    const { data, info } = await img
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: recompress.quality, mozjpeg: true })
      .toBuffer({ resolveWithObject: true });
    return { bytes: data, kind: 'jpg', width: info.width, height: info.height };
  }
  const { data, info } = await img.png({ compressionLevel: 9 }).toBuffer({ resolveWithObject: true });
  return { bytes: data, kind: 'png', width: info.width, height: info.height };
}

async function build(images: Embedded[], pw: number, ph: number, margin: number): Promise<Uint8Array> {
  const { PDFDocument } = await getPdfLib();
  const doc = await PDFDocument.create();
  doc.setProducer('kiln');
  for (const im of images) {
    let embedded;
    try {
      embedded = im.kind === 'jpg' ? await doc.embedJpg(im.bytes) : await doc.embedPng(im.bytes);
    } catch (e) {
      throw new KilnError('UNSUPPORTED_INPUT', `An image could not be placed in the PDF: ${(e as Error).message.split('\n')[0]}`, {
        cause: e,
      });
    }
    const page = doc.addPage([pw, ph]);
    const bw = pw - 2 * margin;
    const bh = ph - 2 * margin;
    const k = Math.min(bw / im.width, bh / im.height);
    const w = im.width * k;
    const h = im.height * k;
    page.drawImage(embedded, { x: margin + (bw - w) / 2, y: margin + (bh - h) / 2, width: w, height: h });
  }
  return doc.save({ useObjectStreams: true });
}
