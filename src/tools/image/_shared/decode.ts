/**
 * Opening any accepted image: openImage (sharp, with vips/Ghostscript for HEIC, JXL and EPS) plus
 * Photoshop files, which libvips in sharp cannot read: ImageMagick flattens their composite to PNG.
 * Tools that declare `input.inMemory` read their input only through here.
 */
import path from 'node:path';
import type { Sharp, SharpOptions } from 'sharp';
import { exec } from '../../../core/process.js';
import type { InputFile } from '../../../core/tool.js';
import { requireEngine } from '../../../engines/registry.js';
import { decodesInProcess, openImage } from '../../../engines/sharp.js';
import { onDisk } from '../../../core/input-bytes.js';

export async function openInput(
  file: InputFile,
  workDir: string,
  signal?: AbortSignal,
  opts: { animated?: boolean } & SharpOptions = {},
): Promise<Sharp> {
  const ext = file.type?.ext;
  if (ext === 'psd') {
    const magick = await requireEngine('imagemagick');
    const png = path.join(workDir, `psd-${Date.now()}-${Math.random().toString(36).slice(2)}.png`);
    // [0] is the flattened composite that Photoshop stores next to the layers.
    await exec(magick, [`${await onDisk(file)}[0]`, `png32:${png}`], { failCode: 'UNSUPPORTED_INPUT', signal, timeoutMs: 120_000 });
    return openImage(png, { workDir, signal, ...opts });
  }
  // An upload held in memory goes to sharp as it is; other engines read it from disk.
  const src = file.bytes && decodesInProcess(ext, workDir) ? file.bytes : await onDisk(file);
  return openImage(src, { ext, workDir, signal, ...opts });
}
