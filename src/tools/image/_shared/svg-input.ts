/**
 * An SVG or SVGZ input made safe to render: decompressed within a bound, checked to be an SVG document
 * and passed through the allow-list sanitizer. librsvg otherwise loads what the document names (an
 * <image href="file:///…"> draws any picture the process can read), so every tool that renders an SVG
 * input — svg-to-raster and, through openInput, every other image tool — renders these bytes only.
 */
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { KilnError } from '../../../core/errors.js';
import type { InputFile } from '../../../core/tool.js';
import type { SanitizeReport } from './svg-sanitize.js';

/** Largest SVG text accepted after decompression (an .svgz can be a zip bomb). */
export const MAX_SVG_BYTES = 64 * 1024 * 1024;

export async function safeSvg(file: InputFile): Promise<{ svg: Buffer; report: SanitizeReport }> {
  let bytes = file.bytes ?? (await readFile(file.path));
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      // In the thread pool: up to 64 MB of inflating would hold the daemon's event loop.
      bytes = await promisify(gunzip)(bytes, { maxOutputLength: MAX_SVG_BYTES });
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
        throw new KilnError('LIMIT_EXCEEDED', `The SVGZ expands to more than ${MAX_SVG_BYTES / 1024 / 1024} MB.`);
      throw new KilnError('UNSUPPORTED_INPUT', `The SVGZ could not be decompressed: ${(e as Error).message}`);
    }
  }
  if (bytes.length > MAX_SVG_BYTES) throw new KilnError('LIMIT_EXCEEDED', `The SVG is larger than ${MAX_SVG_BYTES / 1024 / 1024} MB.`);
  const text = bytes.toString('utf8');
  if (!/<svg[\s>]/i.test(text)) throw new KilnError('UNSUPPORTED_INPUT', `${file.name} is not an SVG document.`);
  // Loaded for an SVG only: every image tool reaches this module through openInput, and the XML parser
  // took 15–30 ms to load, paid by each `kiln resize photo.jpg` before it was lazy.
  const { sanitizeSvg } = await import('./svg-sanitize.js');
  const { svg, report } = sanitizeSvg(text);
  if (report.malformed) throw new KilnError('UNSUPPORTED_INPUT', `${file.name} has markup that is not well-formed XML.`);
  return { svg: Buffer.from(svg), report };
}
