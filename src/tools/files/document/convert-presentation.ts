import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { convertOfficeFile } from '../../../engines/office.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'convert-presentation',
  section: 'files',
  group: 'document',
  summary: 'Convert presentations between PPTX and ODP.',
  description: 'LibreOffice (headless, warm pool) reads PPTX, PPT or ODP and writes the chosen format. Macros never run.',
  input: { kind: 'file', accept: ['.pptx', '.ppt', '.odp'] },
  settings: z.object({
    format: z.enum(['pptx', 'odp']).describe('Output format.'),
  }),
  needs: { engines: ['libreoffice'] },
  execution: 'long',
  output: 'presentation in the chosen format',
  examples: ['slides.pptx --format odp -o slides.odp'],
  async run(ctx, { files }, s) {
    const out = ctx.out(s.format);
    await convertOfficeFile(files[0]!, s.format, out, { workDir: ctx.workDir, signal: ctx.signal, progress: ctx.progress });
    return { outputs: [outputFile(out)] };
  },
});
