/**
 * Pixel bombs of every image format kiln reads, written byte by byte: tiny files whose header declares a
 * huge image (and holds almost no pixel data). Formats whose decoders want a real encoded stream after
 * the header (JPEG, WebP, HEIF/AVIF, JPEG XL) are small real files with the size in their header rewritten.
 */
import { deflateSync } from 'node:zlib';

export function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/** One PNG chunk: length, type, data and CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** A 1-bit greyscale PNG declaring w × h with one row of zeros as its only data (`full`: every row). */
export function pngBomb(w: number, h: number, full = false): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 1;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(Buffer.alloc((1 + Math.ceil(w / 8)) * (full ? h : 1)), { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A BMP declaring w × h, 8 bits per pixel, BI_RLE8, one palette entry. Its pixel data is only the RLE
 * "end of bitmap" code (60 bytes for any size: a decoder fills the rest with the first colour), or with
 * `full`, every row as runs of 255 pixels (a complete file, about w × h / 127 bytes).
 */
export function bmpBomb(w: number, h: number, full = false): Buffer {
  let data = Buffer.from([0, 1]);
  if (full) {
    const row: number[] = [];
    for (let left = w; left > 0; left -= 255) row.push(Math.min(left, 255), 0);
    row.push(0, 0); // end of line
    data = Buffer.concat([Buffer.concat(Array.from({ length: h }, () => Buffer.from(row))), data]);
  }
  const b = Buffer.alloc(14 + 40 + 4);
  b.write('BM', 0, 'latin1');
  b.writeUInt32LE(b.length + data.length, 2);
  b.writeUInt32LE(b.length, 10); // pixel data offset
  b.writeUInt32LE(40, 14); // BITMAPINFOHEADER
  b.writeInt32LE(w, 18);
  b.writeInt32LE(h, 22);
  b.writeUInt16LE(1, 26); // planes
  b.writeUInt16LE(8, 28); // bits per pixel
  b.writeUInt32LE(1, 30); // BI_RLE8
  b.writeUInt32LE(data.length, 34); // image size
  b.writeUInt32LE(1, 46); // colours used
  b.writeUInt32LE(0x00c05020, 54); // the one palette entry (BGRx)
  return Buffer.concat([b, data]);
}

/**
 * A Photoshop file (PSB with `version` 2) declaring w × h RGB, 8 bits, RLE-compressed. Its rows are
 * missing (a truncated file), or with `full`, every row of every channel is runs of 128 zeros (a complete
 * file, about w × h × 3 / 64 bytes).
 */
export function psdBomb(w: number, h: number, opts: { version?: 1 | 2; full?: boolean } = {}): Buffer {
  const version = opts.version ?? 1;
  const head = Buffer.alloc(26);
  head.write('8BPS', 0, 'latin1');
  head.writeUInt16BE(version, 4);
  head.writeUInt16BE(3, 12); // channels
  head.writeUInt32BE(h, 14);
  head.writeUInt32BE(w, 18);
  head.writeUInt16BE(8, 22); // depth
  head.writeUInt16BE(3, 24); // RGB
  // Colour mode data, image resources, layer and mask information: all empty (PSB's last length is 8 bytes).
  const sections = Buffer.alloc(version === 2 ? 16 : 12);
  const parts = [head, sections, Buffer.from([0, 1])]; // compression 1: PackBits
  if (opts.full) {
    const row: number[] = [];
    for (let left = w; left > 0; left -= 128) row.push(257 - Math.min(left, 128), 0); // -(n-1): repeat the next byte n times
    const counts = Buffer.alloc(h * 3 * (version === 2 ? 4 : 2));
    for (let i = 0; i < h * 3; i++) version === 2 ? counts.writeUInt32BE(row.length, i * 4) : counts.writeUInt16BE(row.length, i * 2);
    parts.push(counts, Buffer.concat(Array.from({ length: h * 3 }, () => Buffer.from(row))));
  }
  return Buffer.concat(parts);
}

/** An ICO whose one entry (listed as 256 × 256) is a PNG declaring w × h (`full`: with all its rows). */
export function icoBomb(w: number, h: number, full = false): Buffer {
  const png = pngBomb(w, h, full);
  const dir = Buffer.alloc(6 + 16);
  dir.writeUInt16LE(1, 2);
  dir.writeUInt16LE(1, 4);
  dir.writeUInt16LE(1, 6 + 4); // planes
  dir.writeUInt16LE(32, 6 + 6); // bits
  dir.writeUInt32LE(png.length, 6 + 8);
  dir.writeUInt32LE(dir.length, 6 + 12);
  return Buffer.concat([dir, png]);
}

/** An ICO whose one entry is a 32-bit DIB (BITMAPINFOHEADER) declaring w × h, with no pixel data. */
export function icoDibBomb(w: number, h: number): Buffer {
  const dib = Buffer.alloc(40);
  dib.writeUInt32LE(40, 0);
  dib.writeInt32LE(w, 4);
  dib.writeInt32LE(h * 2, 8); // an icon's DIB counts the XOR bitmap and the AND mask
  dib.writeUInt16LE(1, 12);
  dib.writeUInt16LE(32, 14);
  const dir = Buffer.alloc(6 + 16);
  dir.writeUInt16LE(1, 2);
  dir.writeUInt16LE(1, 4);
  dir.writeUInt16LE(1, 6 + 4);
  dir.writeUInt16LE(32, 6 + 6);
  dir.writeUInt32LE(dib.length, 6 + 8);
  dir.writeUInt32LE(dir.length, 6 + 12);
  return Buffer.concat([dir, dib]);
}

/** LSB-first bit reader and writer, as the JPEG XL codestream is packed. */
class BitReader {
  at = 0;
  constructor(private readonly b: Buffer) {}
  get(count: number): number {
    let v = 0;
    for (let i = 0; i < count; i++, this.at++) v += ((this.b[this.at >> 3]! >> (this.at & 7)) & 1) * 2 ** i;
    return v;
  }
}

class BitWriter {
  private bytes: number[] = [];
  private n = 0;
  put(value: number, count: number): this {
    for (let i = 0; i < count; i++, this.n++) {
      if (this.n % 8 === 0) this.bytes.push(0);
      if (Math.floor(value / 2 ** i) % 2) this.bytes[this.bytes.length - 1]! |= 1 << (this.n % 8);
    }
    return this;
  }
  buffer(): Buffer {
    return Buffer.from(this.bytes);
  }
}

const JXL_U32_BITS = [9, 13, 18, 30];

/**
 * A real bare JPEG XL codestream (FF 0A, as `vips jxlsave` writes it) with its SizeHeader rewritten to
 * declare w × h (each up to 2^30): the header and frames that follow are the original's, moved to the
 * new bit position, so a decoder meets a well-formed file that is far too small for its size.
 */
export function jxlBomb(real: Buffer, w: number, h: number): Buffer {
  if (real[0] !== 0xff || real[1] !== 0x0a) throw new Error('not a bare JPEG XL codestream');
  const r = new BitReader(real.subarray(2));
  // Skip the original SizeHeader: small ? u(5) : U32; ratio u(3); ratio 0 ? (small ? u(5) : U32).
  const small = r.get(1);
  const skipDim = () => (small ? r.get(5) : r.get(JXL_U32_BITS[r.get(2)]!));
  skipDim();
  if (r.get(3) === 0) skipDim();
  const w2 = new BitWriter().put(0, 1);
  const dim = (v: number) => {
    const sel = v <= 512 ? 0 : v <= 8192 ? 1 : v <= 262144 ? 2 : 3;
    w2.put(sel, 2).put(v - 1, JXL_U32_BITS[sel]!);
  };
  dim(h);
  w2.put(0, 3); // ratio 0: the width follows
  dim(w);
  for (let left = (real.length - 2) * 8 - r.at; left > 0; left -= Math.min(left, 16)) w2.put(r.get(Math.min(left, 16)), Math.min(left, 16));
  return Buffer.concat([Buffer.from([0xff, 0x0a]), w2.buffer()]);
}

/** The same codestream in the ISO BMFF container (JXL signature box, ftyp, one jxlc box). */
export function jxlContainerBomb(real: Buffer, w: number, h: number): Buffer {
  const box = (type: string, data: Buffer) => {
    const b = Buffer.alloc(8);
    b.writeUInt32BE(8 + data.length);
    b.write(type, 4, 'latin1');
    return Buffer.concat([b, data]);
  };
  return Buffer.concat([
    box('JXL ', Buffer.from([0x0d, 0x0a, 0x87, 0x0a])),
    box('ftyp', Buffer.from('jxl \0\0\0\0jxl ', 'latin1')),
    box('jxlc', jxlBomb(real, w, h)),
  ]);
}

/**
 * A classic little-endian TIFF declaring w × h 8-bit grey (or CIELab with `lab`), one row per strip, every
 * strip pointing at the same `row` of data: a real image that decodes in full from a file of 8 bytes per
 * row. `row` is one row as stored (compressed with `compression`: 1 none, 50000 ZSTD, 34925 LZMA); by
 * default a row of zeros, uncompressed. `rows` strips are listed (fewer than h: a truncated file).
 */
export function tiffBomb(w: number, h: number, opts: { compression?: number; lab?: boolean; row?: Buffer; rows?: number } = {}): Buffer {
  const lab = opts.lab ?? false;
  const spp = lab ? 3 : 1;
  const row = opts.row ?? Buffer.alloc(w * spp);
  const rows = opts.rows ?? h;
  const entries: [tag: number, type: number, count: number, value: number][] = [
    // type 3 SHORT, 4 LONG; a value of more than 4 bytes is an offset, set below
    [256, 4, 1, w],
    [257, 4, 1, h],
    [258, 3, 1, 8], // bits per sample: 8 in every sample (libtiff takes one value for all)
    [259, 3, 1, opts.compression ?? 1],
    [262, 3, 1, lab ? 8 : 1],
    [273, 4, rows, 0],
    [277, 3, 1, spp],
    [278, 4, 1, 1],
    [279, 4, rows, 0],
  ];
  const ifdAt = 8;
  const offsetsAt = ifdAt + 2 + entries.length * 12 + 4;
  const countsAt = offsetsAt + 4 * rows;
  const rowAt = countsAt + 4 * rows;
  const b = Buffer.alloc(rowAt + row.length);
  b.write('II', 0, 'latin1');
  b.writeUInt16LE(42, 2);
  b.writeUInt32LE(ifdAt, 4);
  b.writeUInt16LE(entries.length, ifdAt);
  entries[5]![3] = rows === 1 ? rowAt : offsetsAt;
  entries[8]![3] = rows === 1 ? row.length : countsAt;
  entries.forEach(([tag, type, count, value], i) => {
    const o = ifdAt + 2 + i * 12;
    b.writeUInt16LE(tag, o);
    b.writeUInt16LE(type, o + 2);
    b.writeUInt32LE(count, o + 4);
    if (type === 3) b.writeUInt16LE(value, o + 8);
    else b.writeUInt32LE(value, o + 8);
  });
  for (let i = 0; i < rows; i++) {
    b.writeUInt32LE(rowAt, offsetsAt + 4 * i);
    b.writeUInt32LE(row.length, countsAt + 4 * i);
  }
  row.copy(b, rowAt);
  return b;
}

/** A GIF whose logical screen and one frame declare w × h (at most 65535) with one pixel of data. */
export function gifBomb(w: number, h: number): Buffer {
  const le = (n: number) => [n & 255, n >> 8];
  const b = [...Buffer.from('GIF89a'), ...le(w), ...le(h), 0x80, 0, 0, 0, 0, 0, 255, 255, 255];
  b.push(0x2c, 0, 0, 0, 0, ...le(w), ...le(h), 0, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b);
  return Buffer.from(b);
}

/** A baseline JPEG with the frame size of its SOF0 marker patched to w × h (at most 65535 each). */
export function jpegBomb(jpeg: Buffer, w: number, h: number): Buffer {
  const out = Buffer.from(jpeg);
  const i = out.indexOf(Buffer.from([0xff, 0xc0]));
  if (i < 0) throw new Error('no SOF0 marker');
  out.writeUInt16BE(h, i + 5);
  out.writeUInt16BE(w, i + 7);
  return out;
}

/**
 * A simple lossy WebP (RIFF, one VP8 chunk, as sharp writes one without metadata) with the frame size of
 * its VP8 key frame header patched to w × h (at most 16383 each).
 */
export function webpBomb(webp: Buffer, w: number, h: number): Buffer {
  const out = Buffer.from(webp);
  if (out.toString('latin1', 12, 16) !== 'VP8 ' || out.readUIntBE(23, 3) !== 0x9d012a) throw new Error('not a simple lossy WebP');
  out.writeUInt16LE(w, 26);
  out.writeUInt16LE(h, 28);
  return out;
}

/**
 * A HEIF/AVIF file with every ispe property (the sizes of its images: the primary one, and a thumbnail
 * or alpha plane when there are) patched to w × h.
 */
export function heifBomb(heif: Buffer, w: number, h: number): Buffer {
  const out = Buffer.from(heif);
  let n = 0;
  for (let i = out.indexOf('ispe', 0, 'latin1'); i >= 0; i = out.indexOf('ispe', i + 4, 'latin1'), n++) {
    // ispe is a FullBox: version and flags (4 bytes), then width and height.
    out.writeUInt32BE(w, i + 8);
    out.writeUInt32BE(h, i + 12);
  }
  if (!n) throw new Error('no ispe box');
  return out;
}

/** An SVG whose root declares w × h user units (pixels at the default 72 dpi). */
export function svgBomb(w: number, h: number): Buffer {
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="10" height="10" fill="#2050c0"/></svg>`,
  );
}
