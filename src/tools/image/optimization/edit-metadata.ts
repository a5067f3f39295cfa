import { copyFile } from 'node:fs/promises';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { exec } from '../../../core/process.js';
import { defineTool } from '../../../core/tool.js';
import { requireEngine } from '../../../engines/registry.js';
import { outputFile } from '../../_shared/output.js';

const EXIF_DATE = /^(\d{4}):(\d{2}):(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/;
// exiftool writes these in place; other formats (BMP, GIF without XMP support…) are refused up front.
const WRITABLE = ['jpg', 'png', 'tiff', 'webp', 'heic', 'heif', 'avif', 'jxl', 'gif'];

const text = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[^\u0000-\u0008\u000b\u000c\u000e-\u001f]*$/, 'control characters are not allowed');

export default defineTool({
  id: 'edit-metadata',
  section: 'image',
  group: 'optimization',
  summary: 'Write title, description, author, copyright, keywords, GPS and date metadata into an image.',
  description:
    'Written with ExifTool into EXIF, IPTC and XMP together (so every reader finds them) without re-encoding the pixels. ' +
    'Only the given fields change. dateTime takes "YYYY:MM:DD HH:MM:SS" or ISO 8601; gps is {lat, lon} in decimal degrees.',
  input: { kind: 'file', accept: ['image/*'] },
  settings: z.object({
    title: text(2000).optional().describe('Document/image title.'),
    description: text(10000).optional().describe('Image description.'),
    author: text(1000).optional().describe('Author/artist.'),
    copyright: text(2000).optional().describe('Copyright notice.'),
    keywords: z.array(text(200).min(1)).max(200).optional().describe('Keywords/tags.'),
    gps: z
      .object({ lat: z.number().min(-90).max(90), lon: z.number().min(-180).max(180) })
      .strict()
      .optional()
      .describe('GPS position {lat, lon} in decimal degrees.'),
    dateTime: z
      .string()
      .refine((v) => EXIF_DATE.test(v) || ISO_DATE.test(v), 'expected "YYYY:MM:DD HH:MM:SS" or ISO 8601')
      .optional()
      .describe('Capture/creation date-time (EXIF "YYYY:MM:DD HH:MM:SS" or ISO 8601).'),
  }),
  check: (s) => {
    if (Object.values(s).every((v) => v === undefined))
      return 'edit-metadata needs at least one field to write (title, description, author, copyright, keywords, gps or dateTime).';
  },
  needs: { engines: ['exiftool'] },
  output: 'image in the input format, pixels untouched',
  examples: ['photo.jpg --title "Harbour" --author "A. Person" --keywords harbour,boats --gps \'{"lat":48.85,"lon":2.35}\''],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const ext = input.type?.ext ?? '';
    if (!WRITABLE.includes(ext))
      throw new KilnError(
        'UNSUPPORTED_INPUT',
        `Metadata cannot be written into ${ext || 'this'} files; use JPEG, PNG, TIFF, WebP, HEIC, AVIF or JXL.`,
      );
    const exiftool = await requireEngine('exiftool');
    const out = ctx.out(ext);
    await copyFile(input.path, out);
    const args = ['-overwrite_original', '-charset', 'utf8', '-codedcharacterset=utf8'];
    const set = (tags: string[], v: string) => {
      for (const t of tags) args.push(`-${t}=${v}`);
    };
    if (s.title !== undefined) {
      set(['XMP-dc:Title', 'IPTC:ObjectName'], s.title);
      // XPTitle is UCS-2: ExifTool keeps only the low 16 bits of a character past U+FFFF (an emoji becomes a
      // private-use glyph). Such a title is left out of it, and an older XPTitle removed rather than left stale.
      const wide = [...s.title].find((c) => c.codePointAt(0)! > 0xffff);
      set(['EXIF:XPTitle'], wide ? '' : s.title);
      if (wide) ctx.warn(`EXIF XPTitle left out: it holds UCS-2 text, which has no room for characters such as '${wide}'`);
    }
    if (s.description !== undefined) set(['EXIF:ImageDescription', 'XMP-dc:Description', 'IPTC:Caption-Abstract'], s.description);
    if (s.author !== undefined) set(['EXIF:Artist', 'XMP-dc:Creator', 'IPTC:By-line'], s.author);
    if (s.copyright !== undefined) set(['EXIF:Copyright', 'XMP-dc:Rights', 'IPTC:CopyrightNotice'], s.copyright);
    if (s.keywords !== undefined) {
      // An empty first assignment clears the list, then each keyword is added as its own item.
      set(['IPTC:Keywords', 'XMP-dc:Subject'], '');
      for (const k of s.keywords) {
        args.push(`-IPTC:Keywords+=${k}`, `-XMP-dc:Subject+=${k}`);
      }
    }
    if (s.gps) {
      args.push(
        `-GPSLatitude=${Math.abs(s.gps.lat)}`,
        `-GPSLatitudeRef=${s.gps.lat < 0 ? 'S' : 'N'}`,
        `-GPSLongitude=${Math.abs(s.gps.lon)}`,
        `-GPSLongitudeRef=${s.gps.lon < 0 ? 'W' : 'E'}`,
      );
    }
    if (s.dateTime !== undefined) {
      const exif = toExifDate(s.dateTime);
      set(['EXIF:DateTimeOriginal', 'EXIF:CreateDate', 'XMP-xmp:CreateDate'], exif);
    }
    args.push(out);
    ctx.progress(40, 'writing metadata');
    await exec(exiftool, args, { signal: ctx.signal, timeoutMs: 60_000, failCode: 'UNSUPPORTED_INPUT' });
    return { outputs: [outputFile(out)] };
  },
});

function toExifDate(v: string): string {
  if (EXIF_DATE.test(v)) return v;
  const m = ISO_DATE.exec(v)!;
  return `${m[1]}:${m[2]}:${m[3]} ${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}`;
}
