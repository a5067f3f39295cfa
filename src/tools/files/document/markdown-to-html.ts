import { z } from 'zod';
import { stem } from '../../../core/paths.js';
import { defineTool } from '../../../core/tool.js';
import { MARKDOWN_IN, toStandaloneHtml } from '../../../engines/pandoc.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'markdown-to-html',
  section: 'files',
  group: 'document',
  summary: 'Convert Markdown to a standalone HTML file.',
  description:
    'pandoc writes one standalone HTML5 file with a clean stylesheet, highlighted code and tables. Raw HTML in the Markdown is ' +
    'shown as text and script links are dropped, so the output is safe to open.',
  input: { kind: 'file', accept: ['.md', '.markdown'] },
  settings: z.object({}),
  needs: { engines: ['pandoc'] },
  execution: 'fast',
  output: 'HTML file',
  examples: ['README.md -o README.html'],
  async run(ctx, { files }) {
    const out = ctx.out('html');
    await toStandaloneHtml(files[0]!.path, MARKDOWN_IN, out, { workDir: ctx.workDir, signal: ctx.signal, title: stem(files[0]!.name) });
    return { outputs: [outputFile(out, { contentType: 'text/html' })] };
  },
});
