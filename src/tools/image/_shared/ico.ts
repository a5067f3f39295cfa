/**
 * ICO writer: small sizes as 32-bit BGRA DIBs (what every Windows and browser version reads), 256 px as
 * PNG-in-ICO (Vista and later), which keeps the file small. Format: Microsoft "Icons" (MSDN, 1995).
 */
export interface IcoImage {
  size: number;
  /** size×size RGBA, top-down. */
  rgba: Uint8Array;
  /** Given for entries stored as PNG. */
  png?: Buffer;
}

export function writeIco(images: IcoImage[]): Buffer {
  const blobs = images.map((im) => im.png ?? dib(im.size, im.rgba));
  const header = Buffer.alloc(6 + 16 * images.length);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(images.length, 4);
  let offset = header.length;
  images.forEach((im, i) => {
    const e = 6 + 16 * i;
    header.writeUInt8(im.size >= 256 ? 0 : im.size, e);
    header.writeUInt8(im.size >= 256 ? 0 : im.size, e + 1);
    header.writeUInt8(0, e + 2);
    header.writeUInt8(0, e + 3);
    header.writeUInt16LE(1, e + 4);
    header.writeUInt16LE(32, e + 6);
    header.writeUInt32LE(blobs[i]!.length, e + 8);
    header.writeUInt32LE(offset, e + 12);
    offset += blobs[i]!.length;
  });
  return Buffer.concat([header, ...blobs]);
}

function dib(size: number, rgba: Uint8Array): Buffer {
  const maskRow = Math.ceil(size / 32) * 4;
  const buf = Buffer.alloc(40 + size * size * 4 + maskRow * size);
  buf.writeUInt32LE(40, 0);
  buf.writeInt32LE(size, 4);
  // The height counts the XOR bitmap and the AND mask together.
  buf.writeInt32LE(size * 2, 8);
  buf.writeUInt16LE(1, 12);
  buf.writeUInt16LE(32, 14);
  buf.writeUInt32LE(0, 16);
  buf.writeUInt32LE(size * size * 4 + maskRow * size, 20);
  for (let y = 0; y < size; y++) {
    const row = size - 1 - y; // DIB rows run bottom-up
    for (let x = 0; x < size; x++) {
      const s = (y * size + x) * 4;
      const d = 40 + (row * size + x) * 4;
      buf[d] = rgba[s + 2]!;
      buf[d + 1] = rgba[s + 1]!;
      buf[d + 2] = rgba[s]!;
      buf[d + 3] = rgba[s + 3]!;
      // AND mask bit set = transparent, for readers that ignore the alpha channel.
      if (rgba[s + 3] === 0) buf[40 + size * size * 4 + row * maskRow + (x >> 3)] |= 0x80 >> (x & 7);
    }
  }
  return buf;
}

/**
 * Index of the largest image in an ICO file's directory (the one a decoder should show); the deeper colour
 * wins a tie. Width and height 0 mean 256. undefined when the bytes are no ICO directory.
 */
export function largestIcoEntry(ico: Buffer): number | undefined {
  if (ico.length < 6 || ico.readUInt16LE(0) !== 0 || ico.readUInt16LE(2) !== 1) return undefined;
  const count = ico.readUInt16LE(4);
  let best: { i: number; area: number; bits: number } | undefined;
  for (let i = 0; i < count && 6 + 16 * i + 16 <= ico.length; i++) {
    const e = 6 + 16 * i;
    const area = (ico[e]! || 256) * (ico[e + 1]! || 256);
    const bits = ico.readUInt16LE(e + 6);
    if (!best || area > best.area || (area === best.area && bits > best.bits)) best = { i, area, bits };
  }
  return best?.i;
}
