/**
 * EPS (and PS) input rendered to a raster by Ghostscript, run as a separate program (AGPL-3.0), for
 * openImage (engines/sharp.ts) to read: one page, cropped to the %%BoundingBox, at a resolution that keeps
 * the raster under KILN_MAX_PIXELS.
 */
import { rm, stat } from 'node:fs/promises';
import { KilnError } from '../core/errors.js';
import { MAX_INPUT_PIXELS } from '../core/limits.js';
import { exec } from '../core/process.js';
import { readHead } from '../core/read-head.js';
import { requireEngine } from './registry.js';

/** Resolution EPS input is rasterized at (EPS is mostly vector art; 72 dpi would look coarse). */
export const EPS_DPI = 300;

/**
 * Renders an EPS (or PS) file to an RGB PNG with Ghostscript, cropped to its %%BoundingBox.
 * -dSAFER keeps the PostScript program from touching files; the page count is capped at one.
 */
export async function rasterizeEps(file: string, outPng: string, o: { dpi?: number; signal?: AbortSignal } = {}): Promise<void> {
  const gs = await requireEngine('ghostscript');
  const dpi = await epsSafeDpi(file, o.dpi ?? EPS_DPI);
  try {
    await exec(
      gs,
      [
        '-q',
        '-dSAFER',
        '-dBATCH',
        '-dNOPAUSE',
        '-dEPSCrop',
        '-dFirstPage=1',
        '-dLastPage=1',
        '-dTextAlphaBits=4',
        '-dGraphicsAlphaBits=4',
        `-r${dpi}`,
        '-sDEVICE=png16m',
        `-sOutputFile=${outPng}`,
        file,
      ],
      { failCode: 'UNSUPPORTED_INPUT', signal: o.signal, timeoutMs: 120_000 },
    );
  } catch (e) {
    await rm(outPng, { force: true });
    if (e instanceof KilnError && e.code === 'UNSUPPORTED_INPUT')
      throw new KilnError('UNSUPPORTED_INPUT', `Ghostscript could not render the EPS file: ${e.message}`, { details: e.details });
    throw e;
  }
  if (!(await stat(outPng).catch(() => undefined))?.size)
    throw new KilnError('UNSUPPORTED_INPUT', 'The EPS file drew nothing that Ghostscript could render.');
}

/**
 * The resolution to render at so that the raster stays under MAX_INPUT_PIXELS: a huge %%BoundingBox is
 * rendered coarser rather than letting Ghostscript allocate gigabytes (the EPS analogue of a pixel bomb).
 */
async function epsSafeDpi(file: string, wanted: number): Promise<number> {
  const head = (await readHead(file, 64 * 1024)).toString('latin1');
  const m = /^%%BoundingBox:\s*(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)/m.exec(head);
  // "(atend)" or no box: Ghostscript falls back to the page size, which is bounded already.
  if (!m) return wanted;
  const w = Math.abs(Number(m[3]) - Number(m[1]));
  const h = Math.abs(Number(m[4]) - Number(m[2]));
  if (!(w > 0 && h > 0)) throw new KilnError('UNSUPPORTED_INPUT', 'The EPS file has an empty %%BoundingBox.');
  const px = (d: number) => ((w * d) / 72) * ((h * d) / 72);
  if (px(wanted) <= MAX_INPUT_PIXELS) return wanted;
  const dpi = Math.floor(72 * Math.sqrt(MAX_INPUT_PIXELS / (w * h)));
  if (dpi < 1) throw new KilnError('LIMIT_EXCEEDED', `The EPS bounding box (${w}×${h} pt) is too large to render.`);
  return dpi;
}
