/**
 * ICC profiles as images carry them: the profile's name (info reports it) and whether it is sRGB,
 * the colour space that PDF's DeviceRGB and untagged outputs are read in.
 */

/** The profile's 'desc' tag (ICC v2 textDescriptionType or v4 multiLocalizedUnicodeType). */
export function iccDescription(icc: Buffer): string | undefined {
  if (icc.length < 132) return undefined;
  const count = icc.readUInt32BE(128);
  for (let i = 0; i < count && 132 + i * 12 + 12 <= icc.length; i++) {
    const at = 132 + i * 12;
    if (icc.toString('latin1', at, at + 4) !== 'desc') continue;
    const off = icc.readUInt32BE(at + 4);
    const size = icc.readUInt32BE(at + 8);
    if (off + size > icc.length || size < 12) return undefined;
    const type = icc.toString('latin1', off, off + 4);
    if (type === 'desc') {
      const n = icc.readUInt32BE(off + 8);
      return icc.toString('latin1', off + 12, Math.min(off + 12 + n, off + size)).replace(/\0.*$/s, '') || undefined;
    }
    if (type === 'mluc' && size >= 28) {
      const len = icc.readUInt32BE(off + 20);
      const strOff = icc.readUInt32BE(off + 24);
      const start = off + strOff;
      if (start + len > icc.length) return undefined;
      const b = Buffer.from(icc.subarray(start, start + len));
      b.swap16();
      return b.toString('utf16le').replace(/\0.*$/s, '') || undefined;
    }
  }
  return undefined;
}

/**
 * Whether pixels tagged with this profile can be used as they are where sRGB is assumed (an untagged
 * image is read as sRGB). A profile not recognised by its name answers false: converting an sRGB image
 * once more costs only size, leaving a Display P3 or Adobe RGB one untouched shifts its colours.
 */
export function isSrgbProfile(icc: Buffer | undefined): boolean {
  if (!icc) return true;
  return /\bsRGB\b/i.test(iccDescription(icc) ?? '');
}
