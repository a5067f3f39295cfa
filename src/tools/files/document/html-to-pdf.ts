import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { htmlToPdf } from '../../../engines/chromium.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'html-to-pdf',
  section: 'files',
  group: 'document',
  summary: 'Render an HTML file to PDF with remote resources disabled.',
  description:
    'Headless Chromium prints the page to A4 PDF (backgrounds on, CSS @page honoured). Remote resources are disabled: ' +
    'every request other than the document itself and data: URLs is blocked, so nothing leaves the machine.',
  input: { kind: 'file', accept: ['.html', '.htm'] },
  settings: z.object({}),
  needs: { engines: ['chromium'] },
  execution: 'long',
  output: 'PDF',
  examples: ['page.html -o page.pdf'],
  async run(ctx, { files }) {
    const out = ctx.out('pdf');
    ctx.progress(10, 'rendering');
    await htmlToPdf(await readFile(files[0]!.path), out, { signal: ctx.signal });
    return { outputs: [outputFile(out)] };
  },
});
