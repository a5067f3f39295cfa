/**
 * The one refusal of a raster too large to make: an output (or a decoded animation) over the pixel
 * limit (KILN_MAX_PIXELS), or with a side no image format holds, refused before it is allocated; and an
 * input whose header declares more pixels than the limit, refused before any engine decodes it
 * (declared-size.ts reads that header for every image format).
 */
import { KilnError } from '../../../core/errors.js';
import { MAX_INPUT_PIXELS } from '../../../core/limits.js';

/** The longest side JPEG, GIF, TIFF strips and PNG writers all take. */
export const MAX_SIDE = 65535;

export interface PixelSize {
  /** A short noun for the message: "resized image", "collage", "page 3 at 600 dpi". */
  what: string;
  width: number;
  height: number;
  /** Frames of an animation (or pages), every one counted. */
  frames?: number;
  /** Refuse a side longer than this too (canvases and renders: MAX_SIDE). */
  maxSide?: number;
  /**
   * The name of the input file whose header declares this size: the message then says what the file is
   * ("The image scan.bmp is …"), not what an output would be.
   */
  input?: string;
  /** A sentence saying what to do instead ("Use dpi 300 or less."). */
  hint?: string;
  details?: unknown;
}

/** Megapixels for a message: whole above 100, else up to 3 significant digits (0.04 MP, 1.5 MP, 12.3 MP). */
function megapixels(pixels: number): string {
  const mp = pixels / 1e6;
  return String(mp >= 100 ? Math.round(mp) : Number(mp.toPrecision(3)));
}

/** Throws LIMIT_EXCEEDED when `width × height × frames` passes KILN_MAX_PIXELS (or a side passes maxSide). */
export function refuseOverPixelLimit(size: PixelSize): void {
  const frames = size.frames ?? 1;
  const w = Math.round(size.width);
  const h = Math.round(size.height);
  const pixels = w * h * frames;
  const dims = `${w}×${h} pixels${frames > 1 ? ` × ${frames} frames` : ''}`;
  const tail = size.hint ? ` ${size.hint}` : '';
  const details = size.details ?? { width: w, height: h, frames, pixels, limit: MAX_INPUT_PIXELS, maxSide: size.maxSide };
  // An input's wording keeps the figure whole, as sharp's own refusal (errors.ts) has always said it.
  if (pixels > MAX_INPUT_PIXELS && size.input !== undefined)
    throw new KilnError(
      'LIMIT_EXCEEDED',
      `The ${size.what} ${size.input} is ${dims} (${megapixels(pixels)} MP), more than the limit of ${MAX_INPUT_PIXELS} (KILN_MAX_PIXELS).${tail}`,
      { details },
    );
  if (pixels > MAX_INPUT_PIXELS)
    throw new KilnError(
      'LIMIT_EXCEEDED',
      `The ${size.what} would be ${dims} (${megapixels(pixels)} MP), above the limit of ${megapixels(MAX_INPUT_PIXELS)} MP (KILN_MAX_PIXELS=${MAX_INPUT_PIXELS}).${tail}`,
      { details },
    );
  if (size.maxSide !== undefined && Math.max(w, h) > size.maxSide)
    throw new KilnError(
      'LIMIT_EXCEEDED',
      `The ${size.what} would be ${dims}, a side longer than the ${size.maxSide} pixels image formats hold.${tail}`,
      { details },
    );
}
