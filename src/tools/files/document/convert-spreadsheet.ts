import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { convertOfficeFile } from '../../../engines/office.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'convert-spreadsheet',
  section: 'files',
  group: 'document',
  summary: 'Convert spreadsheets between XLSX, ODS and CSV; base tool of the spreadsheet preset.',
  description:
    'LibreOffice (headless, warm pool) reads XLSX, XLS, ODS or CSV (separator: comma, semicolon, tab or pipe; encoding: UTF-8, UTF-16 with BOM, Shift_JIS, GBK, CP949, Big5 or Windows-1252; both read from the file) and writes the chosen format. CSV output holds the first visible sheet only (a hidden sheet is never exported); the sheets left out are named in warnings. Macros never run.',
  input: { kind: 'file', accept: ['.xlsx', '.xls', '.ods', '.csv'] },
  settings: z.object({
    format: z.enum(['xlsx', 'ods', 'csv']).describe('Output format.'),
  }),
  needs: { engines: ['libreoffice'] },
  execution: 'long',
  output: 'spreadsheet in the chosen format (CSV = first visible sheet only)',
  examples: ['book.xlsx --format csv -o book.csv'],
  async run(ctx, { files }, s) {
    const out = ctx.out(s.format);
    const { sheetsLeftOut: left } = await convertOfficeFile(files[0]!, s.format, out, {
      workDir: ctx.workDir,
      signal: ctx.signal,
      progress: ctx.progress,
    });
    if (left.length) {
      const shown =
        left
          .slice(0, 10)
          .map((n) => `"${n}"`)
          .join(', ') + (left.length > 10 ? ` and ${left.length - 10} more` : '');
      ctx.warn(`${left.length === 1 ? 'sheet' : 'sheets'} ${shown} left out: CSV holds the first visible sheet only`);
    }
    return { outputs: [outputFile(out)] };
  },
});
