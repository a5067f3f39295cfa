import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { convertOfficeFile } from '../../../engines/office.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'spreadsheet-to-pdf',
  section: 'files',
  group: 'document',
  summary: 'Render a spreadsheet to PDF.',
  description: 'LibreOffice (headless, warm pool) prints every sheet of an XLSX, XLS, ODS or CSV file to PDF. Macros never run.',
  input: { kind: 'file', accept: ['.xlsx', '.xls', '.ods', '.csv'] },
  settings: z.object({}),
  needs: { engines: ['libreoffice'] },
  execution: 'long',
  output: 'PDF',
  examples: ['book.xlsx -o book.pdf'],
  async run(ctx, { files }) {
    const out = ctx.out('pdf');
    await convertOfficeFile(files[0]!, 'pdf-calc', out, { workDir: ctx.workDir, signal: ctx.signal, progress: ctx.progress });
    return { outputs: [outputFile(out)] };
  },
});
