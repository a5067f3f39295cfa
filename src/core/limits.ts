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

/**
 * Largest text input (plain text, Markdown, HTML, subtitles) kiln reads whole or hands to pandoc: 64 MiB
 * by default. A text file becomes one JavaScript string (V8 caps those at 2^29 - 24 characters, about
 * 512 MiB of ASCII) and its HTML for pandoc up to five times that, so a 600 MB text failed as INTERNAL
 * ("Cannot create a string longer than 0x1fffffe8 characters"); pandoc itself took 37 s and 2.2 GB of
 * memory for an 8 MB text. Raise it with KILN_MAX_TEXT_BYTES (at most 100 MiB keeps every string
 * under V8's cap).
 */
export const MAX_TEXT_BYTES = Number(process.env.KILN_MAX_TEXT_BYTES) || 64 * 1024 * 1024;
