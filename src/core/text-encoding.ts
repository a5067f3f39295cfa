/**
 * The character encoding of a text file a user hands us. Spreadsheet programs write CSV as UTF-8 (with
 * or without a BOM), as UTF-16 with a BOM (Excel's "Unicode text") or in the legacy Windows code page
 * (Latin-1 is its subset; in Japan, China, Korea and Taiwan a double-byte code page): text that is not
 * valid UTF-8 all the way through is read in the East Asian code page it fits (legacy-cjk.ts), else as
 * Windows-1252, the one 8-bit encoding that maps almost every byte to a character (never to U+FFFD).
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { formatBytes } from './byte-size.js';
import { KilnError } from './errors.js';
import { type CjkEncoding, detectCjkEncoding } from './legacy-cjk.js';
import { MAX_TEXT_BYTES } from './limits.js';
import { readHead } from './read-head.js';

export type TextEncodingName = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252' | CjkEncoding;

/** How much of a file that is not UTF-8 is read to tell an East Asian code page from Windows-1252. */
const LEGACY_SAMPLE = 1024 * 1024;

/** A non-UTF-8 text's 8-bit or East Asian code page, from a sample of it. */
function legacyEncoding(sample: Uint8Array): TextEncodingName {
  return detectCjkEncoding(sample) ?? 'windows-1252';
}

/** The encoding a byte order mark names, or undefined without one. */
export function bomEncoding(head: Buffer): TextEncodingName | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return undefined;
}

/**
 * The text of a UTF-16 file with a BOM, decoded from its first bytes, or undefined when `head` is not
 * such a file. FF FE is also how an MPEG-1 Layer I frame starts: audio decoded as UTF-16 gives NULs,
 * controls, private-use code points or lone surrogates within a few hundred bytes, text never does.
 */
export function utf16Text(head: Buffer): string | undefined {
  const enc = bomEncoding(head);
  if (enc !== 'utf-16le' && enc !== 'utf-16be') return undefined;
  // A whole number of code units, and a surrogate pair cut at the end of the head is not an error.
  let body = head.subarray(2, 2 + ((head.length - 2) & ~1));
  if (body.length < 2) return undefined;
  if (enc === 'utf-16be') body = Buffer.from(body).swap16();
  let text = body.toString('utf16le');
  if (/[\uD800-\uDBFF]$/.test(text)) text = text.slice(0, -1);
  if (
    /[\0-\x08\x0B\x0E-\x1F\x7F-\x9F\uE000-\uF8FF\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(
      text,
    )
  )
    return undefined;
  return text;
}

/** Reads the whole file once (streamed) to tell valid UTF-8 from a legacy 8-bit encoding. */
export async function detectTextEncoding(file: string): Promise<TextEncodingName> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let first = true;
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>) {
      if (first) {
        first = false;
        const bom = bomEncoding(chunk);
        if (bom) return bom;
      }
      decoder.decode(chunk, { stream: true });
    }
    decoder.decode();
    return 'utf-8';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_ENCODING_INVALID_ENCODED_DATA')
      return legacyEncoding(await readHead(file, LEGACY_SAMPLE));
    throw e;
  }
}

/** The encoding of text held in memory, by the same rules as detectTextEncoding(). */
export function detectBytesEncoding(bytes: Uint8Array): TextEncodingName {
  const bom = bomEncoding(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  if (bom) return bom;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return 'utf-8';
  } catch {
    return legacyEncoding(bytes.subarray(0, LEGACY_SAMPLE));
  }
}

/** Windows-1252's 0x80–0x9F (0x81, 0x8D, 0x8F, 0x90, 0x9D are unassigned: kept as the C1 code point). */
const CP1252_HIGH = '€\x81‚ƒ„…†‡ˆ‰Š‹Œ\x8DŽ\x8F\x90‘’“”•–—˜™š›œ\x9DžŸ';

/**
 * Decodes bytes in `encoding`, without the BOM. Node 20's TextDecoder('windows-1252') decodes as
 * ISO-8859-1 (0x80 gave U+0080, not €), so that one is mapped here.
 */
export function decodeText(bytes: Uint8Array, encoding: TextEncodingName): string {
  if (encoding !== 'windows-1252') return new TextDecoder(encoding).decode(bytes);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('latin1')
    .replace(/[\x80-\x9F]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!);
}

/**
 * Throws LIMIT_EXCEEDED when a text input is larger than KILN_MAX_TEXT_BYTES, from its size alone: read
 * whole, a text of a few hundred MB passed V8's longest string and failed as INTERNAL. `name` is the
 * user's name for the file (a stored upload's path is not); the CLI already prefixes its path.
 */
export async function checkTextSize(file: string, name?: string): Promise<void> {
  const { size } = await stat(file);
  if (size > MAX_TEXT_BYTES)
    throw new KilnError(
      'LIMIT_EXCEEDED',
      `${name ?? 'The text input'} is ${formatBytes(size)}, above the limit of ${formatBytes(MAX_TEXT_BYTES)} for text inputs (KILN_MAX_TEXT_BYTES=${MAX_TEXT_BYTES}).`,
    );
}

/** A whole text file decoded in its detected encoding (without the BOM), and that encoding; size-checked first. */
export async function readText(file: string, name?: string): Promise<{ text: string; encoding: TextEncodingName }> {
  await checkTextSize(file, name);
  const encoding = await detectTextEncoding(file);
  return { text: decodeText(await readFile(file), encoding), encoding };
}

/** Decodes a whole text file in its detected encoding, without the BOM (readText's text). */
export async function readTextFile(file: string, name?: string): Promise<string> {
  return (await readText(file, name)).text;
}
