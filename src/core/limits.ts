/**
 * Size limits that decide before any decoding whether an input is refused. Here, in core, so the error
 * mapping and the engines read the same figure.
 */

/**
 * Largest image accepted, in pixels (decompression bombs): 100 megapixels by default, above every
 * common camera sensor. A 31 KB PNG that declares 16000 × 16000 (just under libvips' own 268 MP limit)
 * held 3-6 GB and up to two minutes of CPU in most image tools; at 100 MP it is refused from its header.
 * Raise it with KILN_MAX_PIXELS for very large scans or panoramas.
 */
export const MAX_INPUT_PIXELS = Number(process.env.KILN_MAX_PIXELS) || 100_000_000;
