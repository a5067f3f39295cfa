/**
 * The meme typefaces ship with kiln as npm packages (@fontsource/*, SIL OFL 1.1). They come as WOFF, which the
 * FreeType inside sharp's libvips does not open, so each is unwrapped once to plain TrueType in the data
 * directory (WOFF 1.0 is the sfnt tables, each zlib-compressed: nothing is re-encoded or downloaded).
 * arial-black and comic-sans are proprietary faces; their open look-alikes Archivo Black and Comic Neue stand in.
 */
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { KilnError } from '../../../core/errors.js';

export const MEME_FONTS = {
  anton: { pkg: 'anton', file: 'anton-latin-400-normal.woff', pango: 'Anton' },
  'bebas-neue': { pkg: 'bebas-neue', file: 'bebas-neue-latin-400-normal.woff', pango: 'Bebas Neue' },
  'permanent-marker': { pkg: 'permanent-marker', file: 'permanent-marker-latin-400-normal.woff', pango: 'Permanent Marker' },
  montserrat: { pkg: 'montserrat', file: 'montserrat-latin-700-normal.woff', pango: 'Montserrat Bold' },
  roboto: { pkg: 'roboto', file: 'roboto-latin-700-normal.woff', pango: 'Roboto Bold' },
  'arial-black': { pkg: 'archivo-black', file: 'archivo-black-latin-400-normal.woff', pango: 'Archivo Black' },
  'comic-sans': { pkg: 'comic-neue', file: 'comic-neue-latin-700-normal.woff', pango: 'Comic Neue Bold' },
} as const;
export type MemeFont = keyof typeof MEME_FONTS;
export const MEME_FONT_IDS = Object.keys(MEME_FONTS) as [MemeFont, ...MemeFont[]];

/** TrueType path and Pango description of a meme font, unwrapped into `<dataDir>/fonts` on first use. */
export async function memeFont(id: MemeFont, dataDir: string): Promise<{ file: string; pango: string }> {
  const f = MEME_FONTS[id];
  const dest = path.join(dataDir, 'fonts', f.file.replace(/\.woff$/, '.ttf'));
  if (!(await stat(dest).catch(() => undefined))?.size) {
    let src: string;
    try {
      src = createRequire(import.meta.url).resolve(`@fontsource/${f.pkg}/files/${f.file}`);
    } catch {
      throw new KilnError('ENGINE_MISSING', `The font package @fontsource/${f.pkg} is not installed (npm install).`);
    }
    await mkdir(path.dirname(dest), { recursive: true });
    const tmp = `${dest}.${process.pid}.${Date.now()}.tmp`;
    try {
      await writeFile(tmp, woffToSfnt(await readFile(src)));
      await rename(tmp, dest);
    } finally {
      await rm(tmp, { force: true });
    }
  }
  return { file: dest, pango: f.pango };
}

/** WOFF 1.0 → sfnt (TrueType/OpenType): rebuild the table directory, inflate each compressed table. */
export function woffToSfnt(buf: Buffer): Buffer {
  if (buf.length < 44 || buf.toString('latin1', 0, 4) !== 'wOFF') throw new KilnError('INTERNAL', 'font file is not WOFF 1.0');
  const flavor = buf.readUInt32BE(4);
  const numTables = buf.readUInt16BE(12);
  const entrySelector = Math.floor(Math.log2(numTables));
  const searchRange = 2 ** entrySelector * 16;
  const header = Buffer.alloc(12 + 16 * numTables);
  header.writeUInt32BE(flavor, 0);
  header.writeUInt16BE(numTables, 4);
  header.writeUInt16BE(searchRange, 6);
  header.writeUInt16BE(entrySelector, 8);
  header.writeUInt16BE(numTables * 16 - searchRange, 10);
  const parts: Buffer[] = [header];
  let offset = header.length;
  for (let i = 0; i < numTables; i++) {
    const o = 44 + i * 20;
    const tag = buf.readUInt32BE(o);
    const at = buf.readUInt32BE(o + 4);
    const compLength = buf.readUInt32BE(o + 8);
    const origLength = buf.readUInt32BE(o + 12);
    const raw = buf.subarray(at, at + compLength);
    const data = compLength < origLength ? inflateSync(raw) : raw;
    const e = 12 + i * 16;
    header.writeUInt32BE(tag, e);
    header.writeUInt32BE(buf.readUInt32BE(o + 16), e + 4);
    header.writeUInt32BE(offset, e + 8);
    header.writeUInt32BE(origLength, e + 12);
    const pad = (4 - (data.length % 4)) % 4;
    parts.push(data, Buffer.alloc(pad));
    offset += data.length + pad;
  }
  return Buffer.concat(parts);
}
