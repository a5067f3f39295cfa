import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { convertOfficeFile } from '../../../engines/office.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'wordprocessor-to-pdf',
  section: 'files',
  group: 'document',
  summary: 'Render a word-processor document to PDF.',
  description: 'LibreOffice (headless, warm pool) lays out DOCX, DOC, ODT, RTF or plain text and exports PDF. Macros never run.',
  input: { kind: 'file', accept: ['.docx', '.doc', '.odt', '.rtf', '.txt'] },
  settings: z.object({}),
  needs: { engines: ['libreoffice'] },
  execution: 'long',
  output: 'PDF',
  examples: ['report.docx -o report.pdf'],
  async run(ctx, { files }) {
    const out = ctx.out('pdf');
    await convertOfficeFile(files[0]!, 'pdf-writer', out, { workDir: ctx.workDir, signal: ctx.signal, progress: ctx.progress });
    return { outputs: [outputFile(out)] };
  },
});
