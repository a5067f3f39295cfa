/**
 * The size an image input declares in its header, read before any engine decodes it, so that openInput
 * refuses one over KILN_MAX_PIXELS (refuseOverPixelLimit) before memory, time or disk go into it. What
 * libvips reads, sharp's metadata() answers (it parses the header only: 5 ms for a PNG declaring
 * 60000 × 60000); for what other engines decode, a small reader per format below: ImageMagick reads BMP,
 * ICO and Photoshop files, the vips CLI JPEG XL and the TIFFs sharp cannot read. Those engines have no
 * limit of ours: a 116 KB 12000 × 10000 Lab TIFF became a 1.4 GB file on disk, and a 480 KB ZSTD TIFF
 * declaring 60000 × 60000 3.6 GB, before sharp refused the result; a 5 KB JPEG XL of 12000 × 10000 took
 * 1.5 GB of memory.
 */
import type { SharpOptions } from 'sharp';
import { source } from '../../../core/input-bytes.js';
import { type ReadAt, withReadAt } from '../../../core/read-head.js';
import type { InputFile } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { tiffForVipsCli } from '../../../engines/tiff-probe.js';
import { apngFrames } from './frames.js';
import { refuseOverPixelLimit } from './pixel-limit.js';

export interface DeclaredSize {
  width: number;
  height: number;
  /** Frames or pages that are all decoded (an animation opened with `animated`), else 1. */
  frames: number;
}

/**
 * Throws LIMIT_EXCEEDED when `file` declares more pixels than KILN_MAX_PIXELS, as openInput will decode
 * it with `opts`. `src` is what will be decoded when that is not the file itself (a sanitized SVG).
 */
export async function refuseOverDeclaredPixels(
  file: InputFile,
  opts: SharpOptions = {},
  src = source(file),
  o: { inProcessToo?: boolean } = {},
): Promise<void> {
  const size = await declaredSize(file.type?.ext, src, opts, o);
  // Frames all decoded are worded as animation.ts and checkApngPixels word them.
  if (size) refuseOverPixelLimit(size.frames > 1 ? { what: 'decoded animation', ...size } : { what: 'image', input: file.name, ...size });
}

/**
 * The size a file of kind `ext` declares, as it will be decoded with `opts` (page, pages, animated, density
 * as sharp takes them); undefined when the header does not say (the decoder then reports the damage).
 * What sharp decodes in this process it refuses from the header itself (limitInputPixels), so it is read
 * here only with `inProcessToo` — for the wording of that refusal (runTool): asking sharp for the header
 * of every input first cost 0.13 ms of CPU per request held in memory and 0.25 ms per file on disk.
 */
export async function declaredSize(
  ext: string | undefined,
  src: string | Buffer,
  opts: SharpOptions = {},
  o: { inProcessToo?: boolean } = {},
): Promise<DeclaredSize | undefined> {
  // Ghostscript renders EPS at a resolution that fits the limit (engines/eps-raster.ts epsSafeDpi).
  if (ext === 'eps') return undefined;
  const reader = ext ? HEADER_READERS[ext] : undefined;
  if (reader) return withReadAt(src, reader);
  // libvips sees an APNG's default image only; animated, ffmpeg decodes every frame at the canvas size.
  if (ext === 'apng' && opts.animated)
    return withReadAt(src, async (read) => {
      const head = await read(0, 1 << 20);
      if (head.toString('latin1', 12, 16) !== 'IHDR') return undefined;
      return { width: head.readUInt32BE(16), height: head.readUInt32BE(20), frames: apngFrames(head) };
    });
  if (ext === 'tiff') {
    const cli = await tiffForVipsCli(src);
    if (cli) return cli.width && cli.height ? { width: cli.width, height: cli.height, frames: 1 } : undefined;
  }
  // HEIC goes to the vips CLI when sharp's own libheif cannot decode HEVC (engines/sharp.ts).
  return o.inProcessToo || ext === 'heic' || ext === 'heif' ? sharpHeaderSize(src, opts) : undefined;
}

/** What libvips' loader states: all pages of an animation opened with `animated`, or the page asked for. */
async function sharpHeaderSize(src: string | Buffer, opts: SharpOptions): Promise<DeclaredSize | undefined> {
  const { animated, page, pages, density } = opts;
  const sharp = await getSharp();
  const meta = await sharp(src, { animated, page, pages, density, limitInputPixels: false })
    .metadata()
    .catch(() => undefined);
  if (!meta?.width || !meta.height) return undefined;
  const frames = animated || (pages !== undefined && pages !== 1) ? (meta.pages ?? 1) : 1;
  // With several pages loaded, libvips stacks them: height is all of them, pageHeight one.
  const height = frames > 1 ? (meta.pageHeight ?? meta.height / frames) : meta.height;
  return { width: meta.width, height, frames };
}

const HEADER_READERS: Readonly<Record<string, (read: ReadAt) => Promise<DeclaredSize | undefined>>> = {
  bmp: async (read) => dibSize(await read(14, 12)),
  psd: psdSize,
  ico: icoSize,
  jxl: jxlSize,
};

/**
 * A DIB header (BMP after its 14-byte file header, an icon's bitmap): BITMAPCOREHEADER (12 bytes) has
 * 16-bit sides, the later ones 32-bit signed (a negative height is a top-down bitmap).
 */
function dibSize(dib: Buffer): DeclaredSize | undefined {
  if (dib.length < 8) return undefined;
  if (dib.readUInt32LE(0) === 12) return { width: dib.readUInt16LE(4), height: dib.readUInt16LE(6), frames: 1 };
  if (dib.length < 12) return undefined;
  return { width: Math.abs(dib.readInt32LE(4)), height: Math.abs(dib.readInt32LE(8)), frames: 1 };
}

/** Photoshop (PSD, and PSB of version 2): the header's height and width; ImageMagick decodes the composite. */
async function psdSize(read: ReadAt): Promise<DeclaredSize | undefined> {
  const h = await read(0, 26);
  if (h.length < 26 || h.toString('latin1', 0, 4) !== '8BPS') return undefined;
  return { width: h.readUInt32BE(18), height: h.readUInt32BE(14), frames: 1 };
}

/**
 * ICO: the largest size any entry's own image declares (a PNG's IHDR, or a DIB whose height counts the
 * bitmap and its mask), not the directory's one-byte sizes, which say 256 at most. Every entry counts:
 * ImageMagick reads the entries before the one decode.ts picks too.
 */
async function icoSize(read: ReadAt): Promise<DeclaredSize | undefined> {
  const head = await read(0, 6);
  if (head.length < 6 || head.readUInt16LE(0) !== 0 || head.readUInt16LE(2) !== 1) return undefined;
  const dir = await read(6, 16 * head.readUInt16LE(4));
  let largest: DeclaredSize | undefined;
  for (let e = 0; e + 16 <= dir.length; e += 16) {
    const img = await read(dir.readUInt32LE(e + 12), 24);
    let size: DeclaredSize | undefined;
    if (img.length >= 24 && img.readUInt32BE(0) === 0x89504e47 && img.toString('latin1', 12, 16) === 'IHDR')
      size = { width: img.readUInt32BE(16), height: img.readUInt32BE(20), frames: 1 };
    else {
      const dib = dibSize(img);
      size = dib && { ...dib, height: Math.ceil(dib.height / 2) };
    }
    if (size && (!largest || size.width * size.height > largest.width * largest.height)) largest = size;
  }
  return largest;
}

/** JPEG XL SizeHeader ratios 1-7: width = height × num / den. */
const JXL_RATIOS: readonly (readonly [number, number])[] = [
  [1, 1],
  [12, 10],
  [4, 3],
  [3, 2],
  [16, 9],
  [5, 4],
  [2, 1],
];

/**
 * JPEG XL: the SizeHeader that opens the codestream (ISO/IEC 18181-1 D.2), bare (FF 0A) or in the ISO
 * BMFF container, where it starts a jxlc box or the first jxlp box (after its 4-byte index).
 */
async function jxlSize(read: ReadAt): Promise<DeclaredSize | undefined> {
  let at = 0;
  const sig = await read(0, 12);
  if (sig[0] !== 0xff || sig[1] !== 0x0a) {
    if (sig.toString('latin1', 4, 8) !== 'JXL ') return undefined;
    // Boxes: 32-bit size (1: a 64-bit size follows, 0: to the end of the file) and type.
    for (let box = 0; ; ) {
      const h = await read(box, 16);
      if (h.length < 8) return undefined;
      const type = h.toString('latin1', 4, 8);
      let size = h.readUInt32BE(0);
      let data = box + 8;
      if (size === 1) {
        if (h.length < 16) return undefined;
        size = Number(h.readBigUInt64BE(8));
        data += 8;
      }
      if (type === 'jxlc' || type === 'jxlp') {
        at = data + (type === 'jxlp' ? 4 : 0);
        break;
      }
      if (size < 8) return undefined;
      box += size;
    }
    const cs = await read(at, 2);
    if (cs[0] !== 0xff || cs[1] !== 0x0a) return undefined;
  }
  const bytes = await read(at + 2, 10);
  let bit = 0;
  const u = (n: number): number => {
    let v = 0;
    for (let i = 0; i < n; i++, bit++) v += ((bytes[bit >> 3] ?? 0) >> (bit & 7)) & 1 ? 2 ** i : 0;
    return v;
  };
  const small = u(1) === 1;
  // U32(1 + u(9), 1 + u(13), 1 + u(18), 1 + u(30)), or (1 + u(5)) × 8 for a small image.
  const side = () => (small ? (u(5) + 1) * 8 : u([9, 13, 18, 30][u(2)]!) + 1);
  const height = side();
  const ratio = u(3);
  const [num, den] = JXL_RATIOS[ratio - 1] ?? [0, 0];
  const width = ratio ? Math.floor((height * num) / den) : side();
  return { width, height, frames: 1 };
}
