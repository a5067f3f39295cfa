import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { MARKDOWN_IN, toDocx } from '../../../engines/pandoc.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'markdown-to-docx',
  section: 'files',
  group: 'document',
  summary: 'Convert Markdown to a DOCX document.',
  description: 'pandoc writes a DOCX with real headings, lists, tables and highlighted code blocks.',
  input: { kind: 'file', accept: ['.md', '.markdown'] },
  settings: z.object({}),
  needs: { engines: ['pandoc'] },
  execution: 'fast',
  output: 'DOCX document',
  examples: ['notes.md -o notes.docx'],
  async run(ctx, { files }) {
    const out = ctx.out('docx');
    await toDocx(files[0]!.path, MARKDOWN_IN, out, { workDir: ctx.workDir, signal: ctx.signal });
    return { outputs: [outputFile(out)] };
  },
});
