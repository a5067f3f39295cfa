import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';

/** A base64 string is held in memory and sent as JSON; beyond this it is no longer a sensible inline asset. */
const MAX_BYTES = 50 * 1024 * 1024;

export default defineTool({
  id: 'image-to-base64',
  section: 'image',
  group: 'utilities',
  summary: 'Encode an image as a base64 string or data URI.',
  description:
    'Returns the image bytes unchanged as base64, either bare or as a data: URI whose MIME type is detected from the bytes (or the one you give).',
  input: { kind: 'file', accept: ['image/*'] },
  settings: z.object({
    format: z.enum(['data-uri', 'plain']).default('data-uri').describe('Output as data URI or bare base64.'),
    mimeType: z
      .string()
      .regex(/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i, 'expected a MIME type such as image/png')
      .optional()
      .describe('MIME type to declare in the data URI; detected from the file when omitted.'),
  }),
  output: 'JSON: base64 text (plain or data URI) with size information',
  examples: ['icon.png --json', 'icon.png --format plain --json'],
  async run(_ctx, { files }, s) {
    const input = files[0]!;
    const size = (await stat(input.path)).size;
    if (size > MAX_BYTES)
      throw new KilnError(
        'LIMIT_EXCEEDED',
        `image-to-base64 takes images up to ${MAX_BYTES / 1024 / 1024} MB (got ${(size / 1024 / 1024).toFixed(1)} MB).`,
      );
    const b64 = (await readFile(input.path)).toString('base64');
    const mimeType = s.mimeType ?? input.type?.mime ?? 'application/octet-stream';
    const text = s.format === 'data-uri' ? `data:${mimeType};base64,${b64}` : b64;
    return {
      outputs: [],
      data: { format: s.format, mimeType, base64: text, originalSize: size, encodedSize: text.length },
    };
  },
});
