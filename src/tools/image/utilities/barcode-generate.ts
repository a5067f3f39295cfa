import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { outputFile } from '../../_shared/output.js';

type Symbology = 'code128' | 'ean13' | 'upca' | 'code39' | 'itf14' | 'datamatrix';

/** GS1 mod-10 check digit of the digits before it (EAN, UPC, ITF-14). */
export function gs1CheckDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum += Number(body[body.length - 1 - i]) * (i % 2 === 0 ? 3 : 1);
  return (10 - (sum % 10)) % 10;
}

function checkGs1(text: string, name: string, len: number): void {
  if (!/^\d+$/.test(text) || (text.length !== len && text.length !== len - 1)) {
    throw new KilnError(
      'VALIDATION_ERROR',
      `${name} takes ${len - 1} digits (check digit added) or ${len} digits with a valid check digit; got "${text}".`,
      {
        details: [{ path: 'text', message: `expected ${len - 1} or ${len} digits` }],
      },
    );
  }
  if (text.length === len) {
    const want = gs1CheckDigit(text.slice(0, -1));
    if (Number(text[len - 1]) !== want) {
      throw new KilnError('VALIDATION_ERROR', `${name} check digit of "${text}" is ${text[len - 1]}, should be ${want}.`, {
        details: [{ path: 'text', message: `bad check digit (expected ${want})` }],
      });
    }
  }
}

/** Rejects text the symbology cannot carry, with a message that says why (bwip-js errors are terse). */
export function validateBarcodeText(type: Symbology, text: string): void {
  const bad = (msg: string) => new KilnError('VALIDATION_ERROR', msg, { details: [{ path: 'text', message: msg }] });
  switch (type) {
    case 'ean13':
      return checkGs1(text, 'EAN-13', 13);
    case 'upca':
      return checkGs1(text, 'UPC-A', 12);
    case 'itf14':
      return checkGs1(text, 'ITF-14', 14);
    case 'code39':
      if (!/^[0-9A-Z \-.$/+%]+$/.test(text)) throw bad('Code 39 carries only 0-9, A-Z (upper case), space and - . $ / + %.');
      return;
    case 'code128':
      // eslint-disable-next-line no-control-regex
      if (!/^[\x00-\x7f]+$/.test(text)) throw bad('Code 128 carries ASCII characters only.');
      return;
    case 'datamatrix':
      return;
  }
}

const BCID: Record<Symbology, string> = {
  code128: 'code128',
  ean13: 'ean13',
  upca: 'upca',
  code39: 'code39',
  itf14: 'itf14',
  datamatrix: 'datamatrix',
};

export default defineTool({
  id: 'barcode-generate',
  section: 'image',
  group: 'utilities',
  summary: 'Render a 1D or 2D barcode from text.',
  description:
    'Code 128, EAN-13, UPC-A, Code 39, ITF-14 or DataMatrix as a PNG on white with a quiet zone, so scanners read it. ' +
    'EAN-13, UPC-A and ITF-14 take the digits without the check digit (it is added) or with a correct one.',
  input: { kind: 'none' },
  settings: z.object({
    text: z.string().min(1).max(256).describe('Text to encode.'),
    type: z.enum(['code128', 'ean13', 'upca', 'code39', 'itf14', 'datamatrix']).default('code128').describe('Symbology.'),
    scale: z.int().min(1).max(8).default(3).describe('Scale factor (pixels per module).'),
    includeText: z.boolean().default(true).describe('Print the human-readable text.'),
  }),
  check: (s) => validateBarcodeText(s.type, s.text),
  output: 'PNG image',
  examples: ['--text 5901234123457 --type ean13 -o ean.png', '--text "HELLO-42" --type code39 --scale 4 -o label.png'],
  async run(ctx, _inputs, s) {
    validateBarcodeText(s.type, s.text);
    const bwip = (await import('bwip-js')).default;
    const quiet = s.type === 'datamatrix' ? 2 : 10;
    let png: Buffer;
    try {
      png = await bwip.toBuffer({
        bcid: BCID[s.type],
        text: s.text,
        scale: s.scale,
        includetext: s.includeText && s.type !== 'datamatrix',
        textxalign: 'center',
        ...(s.type === 'itf14' ? { showborder: false } : {}),
        backgroundcolor: 'FFFFFF',
        // Quiet zones in modules (bwip counts padding in points = modules at scale 1).
        paddingwidth: quiet,
        paddingheight: s.type === 'datamatrix' ? quiet : 4,
      });
    } catch (e) {
      throw new KilnError(
        'VALIDATION_ERROR',
        `Cannot encode "${s.text}" as ${s.type}: ${String((e as Error).message ?? e).replace(/^bwipp\.\w+#\d+: /, '')}`,
      );
    }
    const out = ctx.out('png', '', `barcode-${s.type}`);
    await writeFile(out, png);
    return { outputs: [outputFile(out)], data: { type: s.type, text: s.text } };
  },
});
