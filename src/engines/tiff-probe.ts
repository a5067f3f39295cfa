/**
 * TIFFs that sharp's bundled libvips cannot read and Debian's vips CLI (with Debian's libtiff) can, told
 * from the first IFD before any decoding:
 * - 8-bit CIELab (ImageMagick's `-colorspace Lab`, Photoshop's Lab mode): sharp refused the header, "bad
 *   labq format" (UNSUPPORTED_INPUT), also after a round trip through the vips format;
 * - LZMA and Zstandard compression (GDAL, libtiff's own tools): sharp's libtiff is built without them,
 *   "ZSTD compression support is not configured", which came out as INTERNAL.
 */
import { type ReadAt, withReadAt } from '../core/read-head.js';

const TAG_IMAGE_WIDTH = 256;
const TAG_IMAGE_LENGTH = 257;
const TAG_BITS_PER_SAMPLE = 258;
const TAG_COMPRESSION = 259;
const TAG_PHOTOMETRIC = 262;
const PHOTOMETRIC_CIELAB = 8;
/** libtiff's COMPRESSION_LZMA and COMPRESSION_ZSTD. */
const CLI_CODECS = new Set([34925, 50000]);

/** The first value of each of `tags` in the first IFD of a classic TIFF (BigTIFF: none). */
async function firstValues(read: ReadAt, tags: number[]): Promise<Map<number, number>> {
  const values = new Map<number, number>();
  const head = await read(0, 8);
  if (head.length < 8) return values;
  const le = head.toString('latin1', 0, 2) === 'II';
  const u16 = (b: Buffer, o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (b: Buffer, o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  if (u16(head, 2) !== 42) return values;
  const ifd = u32(head, 4);
  const countBytes = await read(ifd, 2);
  if (countBytes.length < 2) return values;
  const entries = await read(ifd + 2, u16(countBytes, 0) * 12);
  for (let o = 0; o + 12 <= entries.length; o += 12) {
    const tag = u16(entries, o);
    if (!tags.includes(tag)) continue;
    const type = u16(entries, o + 2);
    const size = type === 3 ? 2 : type === 4 ? 4 : 0;
    if (!size) continue;
    // A value that does not fit in the entry's 4 bytes is stored at the offset those bytes give.
    const at = size * u32(entries, o + 4) <= 4 ? entries.subarray(o + 8, o + 12) : await read(u32(entries, o + 8), size);
    if (at.length >= size) values.set(tag, size === 2 ? u16(at, 0) : u32(at, 0));
  }
  return values;
}

/**
 * The vips CLI arguments (before input and output) that turn a TIFF sharp cannot read into a .v file it
 * can, with the first image's size as its header states it (sharp cannot tell it for these: 8-bit Lab
 * fails its header), or undefined for a TIFF sharp reads itself. 8-bit Lab becomes float Lab, which
 * sharp reads (as it reads a float Lab TIFF): libvips' packed LabQ is what it cannot take, and vips
 * 8.14's direct LabQ to sRGB was off by up to 60 levels in red (#4080c0 came out #0081c6).
 */
export async function tiffForVipsCli(
  file: string | Buffer,
): Promise<{ op: 'copy' | 'colourspace'; extra: string[]; width?: number; height?: number } | undefined> {
  const values = await withReadAt(file, (read) =>
    firstValues(read, [TAG_IMAGE_WIDTH, TAG_IMAGE_LENGTH, TAG_BITS_PER_SAMPLE, TAG_COMPRESSION, TAG_PHOTOMETRIC]),
  );
  const size = { width: values.get(TAG_IMAGE_WIDTH), height: values.get(TAG_IMAGE_LENGTH) };
  if (values.get(TAG_PHOTOMETRIC) === PHOTOMETRIC_CIELAB && (values.get(TAG_BITS_PER_SAMPLE) ?? 1) === 8)
    return { op: 'colourspace', extra: ['lab'], ...size };
  if (CLI_CODECS.has(values.get(TAG_COMPRESSION) ?? 1)) return { op: 'copy', extra: [], ...size };
  return undefined;
}
