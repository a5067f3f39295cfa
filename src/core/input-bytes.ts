/**
 * Inputs the daemon kept in memory (InputFile.bytes): a small upload for a tool that reads it through
 * openInput skips the disk twice (the write of the upload and sharp's read of it). Whatever needs the
 * file on disk after all asks onDisk(), which writes it once.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { InputFile } from './tool.js';

/** The input's path, its bytes written there first when it was held in memory (they are dropped then). */
export async function onDisk(file: InputFile): Promise<string> {
  if (file.bytes) {
    await mkdir(path.dirname(file.path), { recursive: true });
    await writeFile(file.path, file.bytes);
    delete file.bytes;
  }
  return file.path;
}

/** What decoders and sniffers read: the bytes when held in memory, else the path. */
export function source(file: InputFile): string | Buffer {
  return file.bytes ?? file.path;
}
