/**
 * Writes a raster image as Encapsulated PostScript. Neither sharp nor libvips writes EPS, and Debian's
 * ImageMagick policy forbids PS output, so the file is built here: a DSC 3.0 EPSF header with the
 * %%BoundingBox, and a level-2 `image` operator reading the pixels from currentfile through
 * ASCII85Decode, with DCTDecode (the JPEG bytes) when a quality is given, else raw RGB samples.
 * One pixel is one PostScript point unless the image carries a DPI.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import type { Sharp } from 'sharp';

export interface EpsOptions {
  /** JPEG quality for DCT-coded pixels; undefined = lossless (uncompressed) samples. */
  quality?: number;
  /** Pixels per inch the bounding box is computed from (72 = one pixel per point). */
  dpi?: number;
  title?: string;
}

/** ASCII85 (Adobe flavour, ending in `~>`), in lines of at most 75 characters as DSC prefers. */
export function ascii85Lines(buf: Buffer): string[] {
  const lines: string[] = [];
  let line = '';
  const push = (s: string) => {
    line += s;
    while (line.length >= 75) {
      lines.push(line.slice(0, 75));
      line = line.slice(75);
    }
  };
  const full = buf.length - (buf.length % 4);
  for (let i = 0; i < full; i += 4) {
    const n = buf.readUInt32BE(i);
    if (n === 0) {
      push('z');
      continue;
    }
    push(encodeGroup(n, 5));
  }
  const rest = buf.length - full;
  if (rest > 0) {
    const tail = Buffer.alloc(4);
    buf.copy(tail, 0, full);
    push(encodeGroup(tail.readUInt32BE(0), rest + 1));
  }
  push('~>');
  if (line) lines.push(line);
  // A data line starting with '%' could be taken for a DSC comment by document managers; ASCII85Decode
  // skips white space, so a leading space defuses it.
  return lines.map((l) => (l.startsWith('%') ? ' ' + l : l));
}

function encodeGroup(n: number, keep: number): string {
  const c = new Array<string>(5);
  for (let j = 4; j >= 0; j--) {
    c[j] = String.fromCharCode(33 + (n % 85));
    n = Math.floor(n / 85);
  }
  return c.slice(0, keep).join('');
}

/** Flattens alpha onto white (EPS images are opaque) and writes `outPath` atomically. */
export async function writeEps(img: Sharp, outPath: string, o: EpsOptions = {}): Promise<{ width: number; height: number }> {
  const flat = img.flatten({ background: '#ffffff' }).toColourspace('srgb').removeAlpha();
  let width: number;
  let height: number;
  let data: Buffer;
  let filter: string;
  if (o.quality !== undefined) {
    const r = await flat
      .jpeg({ quality: o.quality, mozjpeg: false, progressive: false, chromaSubsampling: '4:4:4' })
      .toBuffer({ resolveWithObject: true });
    ({ width, height } = r.info);
    data = r.data;
    filter = '/ASCII85Decode filter /DCTDecode filter';
  } else {
    const r = await flat.raw().toBuffer({ resolveWithObject: true });
    ({ width, height } = r.info);
    if (r.info.channels !== 3) throw new Error(`EPS writer expected RGB, got ${r.info.channels} channels`);
    data = r.data;
    filter = '/ASCII85Decode filter';
  }
  const scale = 72 / (o.dpi && o.dpi > 0 ? o.dpi : 72);
  const w = width * scale;
  const h = height * scale;
  const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(4));
  const header = [
    '%!PS-Adobe-3.0 EPSF-3.0',
    `%%BoundingBox: 0 0 ${Math.ceil(w)} ${Math.ceil(h)}`,
    `%%HiResBoundingBox: 0 0 ${fmt(w)} ${fmt(h)}`,
    '%%Creator: kiln',
    `%%Title: ${(o.title ?? 'image').replace(/[\r\n]/g, ' ')}`,
    '%%LanguageLevel: 2',
    '%%Pages: 1',
    '%%EndComments',
    '%%BeginProlog',
    '%%EndProlog',
    '%%Page: 1 1',
    'gsave',
    `${fmt(w)} ${fmt(h)} scale`,
    '/DeviceRGB setcolorspace',
    '<<',
    '  /ImageType 1',
    `  /Width ${width}`,
    `  /Height ${height}`,
    '  /BitsPerComponent 8',
    '  /Decode [0 1 0 1 0 1]',
    `  /ImageMatrix [${width} 0 0 -${height} 0 ${height}]`,
    `  /DataSource currentfile ${filter}`,
    '>> image',
  ].join('\n');
  const tmp = `${outPath}.partial`;
  try {
    const ws = createWriteStream(tmp);
    const write = async (s: string) => {
      if (!ws.write(s)) await once(ws, 'drain');
    };
    await write(header + '\n');
    const lines = ascii85Lines(data);
    for (let i = 0; i < lines.length; i += 4096) await write(lines.slice(i, i + 4096).join('\n') + '\n');
    await write('grestore\nshowpage\n%%Trailer\n%%EOF\n');
    ws.end();
    await once(ws, 'close');
    await rename(tmp, outPath);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  return { width, height };
}
