/** The first bytes of a file (fewer when it is shorter), without reading the rest: for sniffing headers. */
import { open } from 'node:fs/promises';

/** Reads `length` bytes at `offset` (fewer at the end of the file). */
export type ReadAt = (offset: number, length: number) => Promise<Buffer>;

/**
 * Runs `fn` with random access to a file on disk or to bytes in memory (a header parser walking its
 * offsets), the file open only meanwhile.
 */
export async function withReadAt<T>(src: string | Buffer, fn: (read: ReadAt) => Promise<T>): Promise<T> {
  if (typeof src !== 'string') return fn(async (o, n) => src.subarray(o, o + n));
  const fh = await open(src, 'r');
  try {
    return await fn(async (o, n) => {
      const b = Buffer.alloc(n);
      const { bytesRead } = await fh.read(b, 0, n, o);
      return b.subarray(0, bytesRead);
    });
  } finally {
    await fh.close();
  }
}

export function readHead(file: string, bytes: number): Promise<Buffer> {
  return withReadAt(file, (read) => read(0, bytes));
}
