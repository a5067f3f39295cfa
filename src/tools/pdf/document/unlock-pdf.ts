import { z } from 'zod';
import { secret } from '../../../core/settings.js';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { inspectPdf, jobFile, qpdf, withName } from '../../../engines/qpdf.js';
import { pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'unlock-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Remove password protection using the known password.',
  description: 'qpdf decrypts the PDF with the user or owner password given; the output has no encryption and no restrictions.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    password: secret(z.string().min(1).max(256)).describe('Current password.'),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF (decrypted)',
  examples: ['locked.pdf --password s3cret -o open.pdf'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    // Readable without a password? Then it was not protected (or only had owner restrictions).
    const open = await inspectPdf(input.path, input.name, ctx.signal).catch((e: unknown) => {
      if (e instanceof KilnError && e.reason === 'pdf-encrypted') return undefined;
      throw e;
    });
    const out = ctx.out('pdf', '-unlocked');
    const job = await jobFile(ctx.workDir, { inputFile: input.path, password: s.password, outputFile: out, decrypt: '' });
    try {
      await qpdf([job], { signal: ctx.signal });
    } catch (e) {
      if (e instanceof KilnError && /invalid password/i.test(e.message)) {
        throw new KilnError('VALIDATION_ERROR', `The password is not correct for ${input.name}.`, {
          details: [{ path: 'password', message: 'wrong password' }],
          reason: 'wrong-password',
        });
      }
      if (e instanceof KilnError && e.code === 'UNSUPPORTED_INPUT')
        throw new KilnError('UNSUPPORTED_INPUT', `${input.name} is not a readable PDF: ${withName(e.message, input.path, input.name)}`);
      throw e;
    }
    return { outputs: [pdfOutput(out)], data: { wasEncrypted: open ? open.encrypted : true, neededPassword: !open } };
  },
});
