/**
 * The OCR runtime archive's tar format, written and read here rather than by GNU tar so that every
 * byte is under kiln's control: written deterministically (entries in path order, owner 0, mtime 0,
 * modes from the index) so an archive assembled on another machine from the same npm tarballs has the
 * same SHA-256; read strictly (only regular files; every other entry type is reported for refusal).
 */
import { KilnError } from '../../core/errors.js';

export interface TarEntry {
  path: string;
  /** '0' regular file, '5' directory, '2' symlink, '1' hard link, … (the header's type flag). */
  type: string;
  mode: number;
  size: number;
  linkTarget?: string;
  data: Buffer;
}

function octal(buf: Buffer, off: number, len: number, value: number): void {
  buf.write(`${value.toString(8).padStart(len - 1, '0')}\0`, off, len, 'ascii');
}

function splitName(p: string): { name: string; prefix: string } {
  if (Buffer.byteLength(p) <= 100) return { name: p, prefix: '' };
  for (let i = p.lastIndexOf('/'); i > 0; i = p.lastIndexOf('/', i - 1)) {
    const prefix = p.slice(0, i);
    const name = p.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { name, prefix };
  }
  throw new Error(`path too long for ustar: ${p}`);
}

/** One ustar header block. */
export function tarHeader(e: { path: string; type?: string; mode: number; size: number; linkTarget?: string }): Buffer {
  const h = Buffer.alloc(512);
  const { name, prefix } = splitName(e.path);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, e.mode);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, e.size);
  octal(h, 136, 12, 0);
  h.fill(' ', 148, 156);
  h.write(e.type ?? '0', 156, 1, 'ascii');
  if (e.linkTarget) h.write(e.linkTarget, 157, 100, 'utf8');
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return h;
}

/** The whole archive as chunks: each entry's header, data and padding, then two zero blocks. */
export function* tarChunks(
  entries: Iterable<{ path: string; type?: string; mode: number; data: Buffer; linkTarget?: string }>,
): Generator<Buffer> {
  for (const e of entries) {
    yield tarHeader({ ...e, size: e.data.length });
    yield e.data;
    const pad = (512 - (e.data.length % 512)) % 512;
    if (pad) yield Buffer.alloc(pad);
  }
  yield Buffer.alloc(1024);
}

const str = (b: Buffer, off: number, len: number) => {
  const s = b.subarray(off, off + len);
  const z = s.indexOf(0);
  return (z < 0 ? s : s.subarray(0, z)).toString('utf8');
};

function bad(message: string, reason: string): KilnError {
  return new KilnError('UNSUPPORTED_INPUT', message, { reason });
}

/** Every entry of an uncompressed tar held in memory; a malformed archive is refused. */
export function* readTar(tar: Buffer): Generator<TarEntry> {
  let off = 0;
  while (off + 512 <= tar.length) {
    const h = tar.subarray(off, off + 512);
    if (h.every((b) => b === 0)) return;
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    if (Number.parseInt(str(h, 148, 8).trim(), 8) !== sum)
      throw bad('The OCR runtime archive has a damaged tar header.', 'archive-malformed');
    const name = str(h, 0, 100);
    const prefix = str(h, 345, 155);
    const size = Number.parseInt(str(h, 124, 12).trim() || '0', 8);
    const type = str(h, 156, 1) || '0';
    const mode = Number.parseInt(str(h, 100, 8).trim() || '0', 8);
    const start = off + 512;
    if (!Number.isFinite(size) || size < 0 || start + size > tar.length)
      throw bad('The OCR runtime archive is truncated.', 'archive-malformed');
    yield {
      path: prefix ? `${prefix}/${name}` : name,
      type,
      mode,
      size,
      linkTarget: str(h, 157, 100) || undefined,
      data: tar.subarray(start, start + size),
    };
    off = start + Math.ceil(size / 512) * 512;
  }
  throw bad('The OCR runtime archive ends without its end-of-archive blocks.', 'archive-malformed');
}
