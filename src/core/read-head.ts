/** The first bytes of a file (fewer when it is shorter), without reading the rest: for sniffing headers. */
import { open } from 'node:fs/promises';

export async function readHead(file: string, bytes: number): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
