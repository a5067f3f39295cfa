import { z } from 'zod';
import { secret } from '../../../core/settings.js';
import { defineTool } from '../../../core/tool.js';
import { jobFile, qpdf } from '../../../engines/qpdf.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'protect-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Encrypt a PDF with AES-256 user/owner passwords.',
  description:
    'qpdf encrypts with AES-256 (PDF 2.0 / R6). userPassword is needed to open the file; ownerPassword (defaults to userPassword) to change permissions.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    userPassword: secret(z.string().min(1).max(256)).describe('Password to open the PDF.'),
    ownerPassword: secret(z.string().min(1).max(256)).optional().describe('Permissions password; defaults to userPassword.'),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF (encrypted)',
  examples: ['contract.pdf --user-password s3cret -o locked.pdf'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!);
    const out = ctx.out('pdf', '-protected');
    const job = await jobFile(ctx.workDir, {
      inputFile: pdf.path,
      outputFile: out,
      encrypt: { userPassword: s.userPassword, ownerPassword: s.ownerPassword ?? s.userPassword, '256bit': {} },
    });
    await qpdf([job], { signal: ctx.signal });
    return {
      outputs: [pdfOutput(out)],
      data: {
        encryption: 'AES-256',
        pages: pdf.pages,
        separateOwnerPassword: s.ownerPassword !== undefined && s.ownerPassword !== s.userPassword,
      },
    };
  },
});
