import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { convertOfficeFile } from '../../../engines/office.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'presentation-to-pdf',
  section: 'files',
  group: 'document',
  summary: 'Render a presentation to PDF.',
  description: 'LibreOffice (headless, warm pool) exports one PDF page per slide of a PPTX, PPT or ODP file. Macros never run.',
  input: { kind: 'file', accept: ['.pptx', '.ppt', '.odp'] },
  settings: z.object({}),
  needs: { engines: ['libreoffice'] },
  execution: 'long',
  output: 'PDF',
  examples: ['slides.pptx -o slides.pdf'],
  async run(ctx, { files }) {
    const out = ctx.out('pdf');
    await convertOfficeFile(files[0]!, 'pdf-impress', out, { workDir: ctx.workDir, signal: ctx.signal, progress: ctx.progress });
    return { outputs: [outputFile(out)] };
  },
});
