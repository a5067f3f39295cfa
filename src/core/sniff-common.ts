/**
 * The commonest image signatures, told apart without loading file-type (~100 KiB of modules with their
 * dependencies, 10–30 ms of a CLI run). Only signatures whose answer cannot differ from file-type's:
 * no check that file-type runs before these matches their first bytes (test/core/sniff-common.test.ts
 * compares both on every case). Anything else returns undefined and goes to file-type.
 */
import type { FileKind } from './sniff.js';

export function sniffCommonImage(head: Uint8Array): FileKind | undefined {
  if (head.length < 4) return undefined;
  // JPEG: FF D8 FF, except JPEG-LS (a fourth byte F7), which file-type names jls.
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff && head[3] !== 0xf7) return { ext: 'jpg', mime: 'image/jpeg', text: false };
  // GIF87a / GIF89a: file-type answers gif on the first three bytes.
  if (head[0] === 0x47 && head[1] === 0x49 && head[2] === 0x46) return { ext: 'gif', mime: 'image/gif', text: false };
  return undefined;
}
