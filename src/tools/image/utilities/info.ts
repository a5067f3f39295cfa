import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { KilnError, toKilnError } from '../../../core/errors.js';
import { getSharp, isAnimatedFormat } from '../../../engines/sharp.js';
import { openInput } from '../_shared/decode.js';
import { apngTiming } from '../_shared/frames.js';
import { iccDescription } from '../_shared/icc.js';
import { readFile } from 'node:fs/promises';

const DEPTH_BITS: Record<string, number> = {
  uchar: 8,
  char: 8,
  ushort: 16,
  short: 16,
  uint: 32,
  int: 32,
  float: 32,
  complex: 64,
  double: 64,
  dpcomplex: 128,
};

export default defineTool({
  id: 'info',
  section: 'image',
  group: 'utilities',
  summary: "Report an image's dimensions, format, size, channels, alpha, DPI and EXIF.",
  description:
    'Returns JSON only: width, height (one frame, as stored), displayWidth/displayHeight (after EXIF orientation), format, size in bytes, channels, hasAlpha, ' +
    'dpi, orientation, colorSpace, bitDepth, pages and frame delays of animations, the ICC profile name, and the EXIF data as readable JSON ' +
    '(dates as ISO strings, binary fields left out).',
  input: { kind: 'file', accept: ['image/*'] },
  settings: z.object({}),
  output: 'JSON',
  examples: ['photo.jpg', 'animation.gif -o info.json'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const ext = input.type?.ext;
    // Read from what another engine decoded them to (Ghostscript, vips, ImageMagick): their format is theirs,
    // not that of the intermediate file (a Photoshop file was reported as "png").
    const decodedElsewhere = ['eps', 'jxl', 'psd', 'bmp', 'ico'].includes(ext ?? '');
    let meta;
    try {
      // Only the header is read: HEIC's HEVC pixels need not be decodable by sharp for its metadata.
      // No pixel limit on a header: the size of an image too large for the other tools is worth knowing.
      const img = decodedElsewhere
        ? await openInput(input, ctx.workDir, ctx.signal)
        : (await getSharp())(input.path, { animated: isAnimatedFormat(ext), limitInputPixels: false });
      meta = await img.metadata();
    } catch (e) {
      if (e instanceof KilnError) throw e;
      if (toKilnError(e).code === 'LIMIT_EXCEEDED') throw toKilnError(e);
      throw new KilnError('UNSUPPORTED_INPUT', `${input.name} could not be read as an image: ${(e as Error).message}`);
    }
    // libvips sees an APNG's default image only: its frames, loop and delays come from its chunks.
    const apng = ext === 'apng' ? apngTiming(input.bytes ?? (await readFile(input.path))) : undefined;
    const pages = apng?.frames ?? meta.pages ?? 1;
    // A multi-page TIFF has pages, not an animation.
    const animated = pages > 1 && ext !== 'tiff';
    const height = meta.pageHeight ?? meta.height!;
    const orientation = meta.orientation ?? 1;
    let exif: Record<string, unknown> | undefined;
    if (meta.exif) {
      try {
        const exifReader = (await import('exif-reader')).default;
        exif = readable(exifReader(meta.exif)) as Record<string, unknown>;
        delete exif.bigEndian;
      } catch {
        exif = undefined; // a broken EXIF block is not a reason to fail the whole report
      }
    }
    const data: Record<string, unknown> = {
      width: meta.width,
      height,
      displayWidth: orientation >= 5 ? height : meta.width,
      displayHeight: orientation >= 5 ? meta.width : height,
      format: decodedElsewhere ? ext : meta.format === 'jpeg' ? 'jpg' : meta.format === 'heif' && ext ? ext : meta.format,
      mime: input.type?.mime,
      size: input.size,
      channels: meta.channels,
      hasAlpha: meta.hasAlpha ?? false,
      dpi: meta.density ?? null,
      orientation,
      colorSpace: meta.space,
      bitDepth: (meta as { bitsPerSample?: number }).bitsPerSample ?? (meta.depth ? DEPTH_BITS[meta.depth] : undefined),
      isProgressive: meta.isProgressive ?? false,
      pages,
      animated,
      ...(animated ? { loop: apng?.loop ?? meta.loop ?? 0, delays: apng?.delays ?? meta.delay ?? [] } : {}),
      iccProfile: meta.icc ? (iccDescription(meta.icc) ?? 'unnamed') : null,
      hasExif: !!meta.exif,
      hasXmp: !!meta.xmp,
      hasIptc: !!meta.iptc,
      exif: exif ?? null,
    };
    return { outputs: [], data };
  },
});

/** JSON-friendly copy: Dates as ISO strings, binary blobs dropped, NaN/Infinity as null. */
function readable(v: unknown): unknown {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return undefined;
  if (Array.isArray(v)) return v.map(readable);
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string') return v.replace(/\0+$/, '');
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const r = readable(x);
      if (r !== undefined) o[k] = r;
    }
    return o;
  }
  return v;
}
