/**
 * Opening any accepted image: openImage (sharp, with vips/Ghostscript for HEIC, JXL and EPS) plus
 * Photoshop files, which libvips in sharp cannot read: ImageMagick flattens their composite to PNG.
 */
import path from 'node:path';
import type { Sharp, SharpOptions } from 'sharp';
import { exec } from '../../../core/process.js';
import type { InputFile } from '../../../core/tool.js';
import { requireEngine } from '../../../engines/registry.js';
import { openImage } from '../../../engines/sharp.js';

export async function openInput(
  file: InputFile,
  workDir: string,
  signal?: AbortSignal,
  opts: { animated?: boolean } & SharpOptions = {},
): Promise<Sharp> {
  if (file.type?.ext === 'psd') {
    const magick = await requireEngine('imagemagick');
    const png = path.join(workDir, `psd-${Date.now()}-${Math.random().toString(36).slice(2)}.png`);
    // [0] is the flattened composite that Photoshop stores next to the layers.
    await exec(magick, [`${file.path}[0]`, `png32:${png}`], { failCode: 'UNSUPPORTED_INPUT', signal, timeoutMs: 120_000 });
    return openImage(png, { workDir, signal, ...opts });
  }
  return openImage(file.path, { ext: file.type?.ext, workDir, signal, ...opts });
}
