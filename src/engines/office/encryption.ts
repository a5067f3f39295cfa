/**
 * Password-protected office documents, recognised before LibreOffice opens them. Headless LibreOffice
 * cannot ask for the password and reports nothing useful: the user was told the file "is corrupt or not
 * of the type it claims". Two forms are recognised:
 * - OOXML (DOCX, XLSX, PPTX) with a password is no ZIP any more: Office wraps it in a Compound File
 *   (the sniffer's `cfb`) holding an `EncryptedPackage` stream (MS-OFFCRYPTO 2.3.4.4).
 * - ODF (ODT, ODS, ODP) stays a ZIP whose manifest gives each encrypted part an `encryption-data`
 *   element (ODF 1.2 part 3, 3.8.3); the ZIP guard reads the manifest anyway, this taps it.
 */
import { open } from 'node:fs/promises';
import { KilnError } from '../../core/errors.js';
import type { ZipTap } from '../../core/zip-guard.js';

export function passwordProtectedDocument(): KilnError {
  return new KilnError(
    'UNSUPPORTED_INPUT',
    'The document is password-protected, and a conversion cannot ask for the password. Save a copy without one in the application that made it, then convert that copy.',
    { reason: 'document-encrypted' },
  );
}

/** Compound File directory entries are 128 bytes; the name is UTF-16LE, its byte length (with NUL) at 0x40. */
const DIR_ENTRY = 128;
const ENCRYPTED_PACKAGE = 'EncryptedPackage';
/** FAT chain markers (MS-CFB 2.1): at or above this, a sector number ends the chain. */
const MAX_SECTOR = 0xfffffffa;
/** A directory longer than this many sectors is not an encrypted OOXML package (it holds ~10 entries). */
const MAX_DIR_SECTORS = 64;

/**
 * Whether the Compound File `file` holds a root-level `EncryptedPackage` stream. Walks the directory's
 * sector chain through the FAT sectors the header lists (enough for any directory near the start of
 * a file of up to ~7 MB with 512-byte sectors, and far more with 4096-byte ones); false when the file
 * is not laid out so.
 */
export async function isEncryptedOoxml(file: string): Promise<boolean> {
  const fh = await open(file, 'r');
  try {
    const read = async (pos: number, len: number) => {
      const buf = Buffer.alloc(len);
      const { bytesRead } = await fh.read(buf, 0, len, pos);
      return buf.subarray(0, bytesRead);
    };
    const header = await read(0, 512);
    if (header.length < 512 || header.readUInt32BE(0) !== 0xd0cf11e0) return false;
    const sectorSize = 1 << header.readUInt16LE(0x1e);
    if (sectorSize !== 512 && sectorSize !== 4096) return false;
    const sectorAt = (n: number) => read((n + 1) * sectorSize, sectorSize);
    const perFat = sectorSize / 4;
    /** The FAT entry of sector n, through the 109 FAT sector numbers of the header (DIFAT). */
    const next = async (n: number): Promise<number> => {
      const k = Math.floor(n / perFat);
      if (k >= 109) return MAX_SECTOR;
      const fatSector = header.readUInt32LE(0x4c + k * 4);
      if (fatSector >= MAX_SECTOR) return MAX_SECTOR;
      const fat = await sectorAt(fatSector);
      const at = (n % perFat) * 4;
      return at + 4 <= fat.length ? fat.readUInt32LE(at) : MAX_SECTOR;
    };
    let sector = header.readUInt32LE(0x30);
    for (let hops = 0; sector < MAX_SECTOR && hops < MAX_DIR_SECTORS; hops++) {
      const dir = await sectorAt(sector);
      for (let at = 0; at + DIR_ENTRY <= dir.length; at += DIR_ENTRY) {
        const nameBytes = dir.readUInt16LE(at + 0x40);
        if (nameBytes < 2 || nameBytes > 64) continue;
        if (dir.toString('utf16le', at, at + nameBytes - 2) === ENCRYPTED_PACKAGE) return true;
      }
      sector = await next(sector);
    }
    return false;
  } finally {
    await fh.close();
  }
}

/** The manifest is small; a larger one is cut here (the marker sits in the first entries anyway). */
const MANIFEST_CAP = 1024 * 1024;

/** A tap on an ODF package's manifest that tells whether any part is encrypted. */
export function odfEncryptionTap(): { tap: ZipTap; encrypted(): boolean } {
  let text = '';
  return {
    tap: {
      part: /^META-INF\/manifest\.xml$/,
      data(chunk) {
        if (text.length < MANIFEST_CAP) text += chunk.toString('latin1');
      },
    },
    encrypted: () => /<(?:\w+:)?encryption-data\b/.test(text),
  };
}
