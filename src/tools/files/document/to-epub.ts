import path from 'node:path';
import { z } from 'zod';
import { stem } from '../../../core/paths.js';
import { defineTool } from '../../../core/tool.js';
import { guardZip } from '../../../core/zip-guard.js';
import { MARKDOWN_IN, PLAIN_TEXT_IN, toEpub } from '../../../engines/pandoc.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'to-epub',
  section: 'files',
  group: 'document',
  summary: 'Build an EPUB e-book from a DOCX, Markdown, HTML or text file.',
  description:
    'pandoc builds an EPUB 3 with a table of contents from the headings. The title comes from the document (DOCX properties, ' +
    'HTML <title>, Markdown front matter) or else from the file name. Text files become one paragraph per blank-line block.',
  input: { kind: 'file', accept: ['.docx', '.md', '.html', '.txt'] },
  settings: z.object({}),
  needs: { engines: ['pandoc'] },
  execution: 'long',
  output: 'EPUB file',
  examples: ['novel.docx -o novel.epub', 'notes.md -o notes.epub'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const ext = input.type?.ext ?? path.extname(input.name).slice(1).toLowerCase();
    const title = stem(input.name);
    let from: string;
    if (ext === 'docx') {
      await guardZip(input.path, 'docx', undefined, ctx.signal);
      from = 'docx';
    } else if (ext === 'md' || ext === 'markdown') from = MARKDOWN_IN;
    else if (ext === 'html' || ext === 'htm') from = 'html';
    else from = PLAIN_TEXT_IN;
    const out = ctx.out('epub');
    ctx.progress(10, 'building');
    await toEpub(input.path, from, out, { workDir: ctx.workDir, signal: ctx.signal, title });
    return { outputs: [outputFile(out)] };
  },
});
