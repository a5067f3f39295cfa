import { copyFile, rename, rm } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { exec } from '../../../core/process.js';
import { engineStatus } from '../../../engines/registry.js';
import { isAnimatedFormat, sameFormatAs, writeImage } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';

// Formats ExifTool rewrites in place without touching the pixels.
const LOSSLESS_STRIP = new Set(['jpg', 'png', 'webp', 'tiff', 'gif']);

// -all= keeps a TIFF's IFD0 (the image lives there), and with it who made the file and on what: the
// common descriptive tags go by name (CommonIFD0: Make, Model, Software, Artist, Copyright, ModifyDate,
// ImageDescription, XP* tags…) with the TIFF-only ones it leaves out. No-ops in other formats.
const IFD0_TAGS = ['-CommonIFD0=', '-HostComputer=', '-DocumentName=', '-PageName='];

export default defineTool({
  id: 'strip-metadata',
  section: 'image',
  group: 'optimization',
  summary: 'Remove EXIF, GPS and other metadata from an image.',
  description:
    'Removes EXIF (including GPS), XMP, IPTC, comments and embedded profiles. When the pixels need no change (JPEG, PNG, WebP, TIFF, GIF ' +
    'without an EXIF rotation or ICC profile) ExifTool deletes the metadata without re-encoding. Otherwise sharp re-encodes at high quality ' +
    'after applying the EXIF orientation and converting the colours to sRGB, so the picture looks the same without its metadata.',
  input: { kind: 'file', accept: ['image/*'] },
  // ExifTool keeps every page or frame; a re-encode only the first, unless the format is animated.
  frames: (f, _s, result) => result.data?.method === 'reencode' && !isAnimatedFormat(f.type?.ext),
  settings: z.object({}),
  output: 'image in the input format',
  examples: ['photo.jpg -o clean.jpg'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const ext = input.type?.ext;
    const format = sameFormatAs(ext);
    const animated = isAnimatedFormat(ext);
    const img = await openInput(input, ctx.workDir, ctx.signal, { animated });
    const meta = await img.metadata();
    const out = ctx.out(format);
    const exiftool = await engineStatus('exiftool');
    let method: 'exiftool' | 'reencode' = 'reencode';
    if (exiftool.available && exiftool.path && format === ext && LOSSLESS_STRIP.has(format) && (meta.orientation ?? 1) <= 1 && !meta.icc) {
      const tmp = `${out}.partial`;
      try {
        await copyFile(input.path, tmp);
        // -all= deletes every writable group; the file keeps its pixel data byte for byte.
        await exec(exiftool.path, ['-q', '-q', '-m', '-all=', ...IFD0_TAGS, '-overwrite_original', '--', tmp], {
          signal: ctx.signal,
          failCode: 'UNSUPPORTED_INPUT',
          timeoutMs: 60_000,
        });
        await rename(tmp, out);
        method = 'exiftool';
      } catch {
        await rm(tmp, { force: true });
      }
    }
    if (method === 'reencode') {
      if ((meta.orientation ?? 1) > 1) img.autoOrient();
      // sharp drops all metadata by default; it converts to sRGB before dropping the ICC profile.
      await writeImage(img, out, format, { quality: format === 'jpg' ? 95 : format === 'webp' ? 90 : undefined, keepMetadata: false });
    }
    return { outputs: [outputFile(out)], data: { method } };
  },
});
