import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { convertOfficeFile } from '../../../engines/office.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'convert-document',
  section: 'files',
  group: 'document',
  summary: 'Convert word-processor documents between DOCX, ODT, RTF and TXT.',
  description: 'LibreOffice (headless, warm pool) reads DOCX, DOC, ODT, RTF or plain text and writes the chosen format. Macros never run.',
  input: { kind: 'file', accept: ['.docx', '.doc', '.odt', '.rtf', '.txt'] },
  settings: z.object({
    format: z.enum(['docx', 'odt', 'rtf', 'txt']).describe('Output format.'),
  }),
  needs: { engines: ['libreoffice'] },
  execution: 'long',
  output: 'document in the chosen format',
  examples: ['report.docx --format odt -o report.odt'],
  async run(ctx, { files }, s) {
    const out = ctx.out(s.format);
    await convertOfficeFile(files[0]!, s.format, out, { workDir: ctx.workDir, signal: ctx.signal, progress: ctx.progress });
    return { outputs: [outputFile(out)] };
  },
});
