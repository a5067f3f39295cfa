import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { exec } from '../../../core/process.js';
import { defineTool } from '../../../core/tool.js';
import { passwordProtectedError, withName } from '../../../engines/qpdf.js';
import { pdfwrite } from '../../../engines/ghostscript.js';
import { requireEngine } from '../../../engines/registry.js';
import { pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'repair-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Best-effort repair of a damaged PDF.',
  description:
    'qpdf reads the file, reconstructing a broken cross-reference table, and writes a clean one. When qpdf cannot, Ghostscript re-interprets the pages it can read and writes a new PDF (data.method says which worked).',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({}),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['broken.pdf -o fixed.pdf'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const out = ctx.out('pdf', '-repaired');
    const bin = await requireEngine('qpdf');
    const r = await exec(bin, [input.path, '--object-streams=generate', out], {
      signal: ctx.signal,
      timeoutMs: 180_000,
      okCodes: [0, 2, 3],
      failCode: 'UNSUPPORTED_INPUT',
    });
    if (/invalid password/i.test(r.stderr)) throw passwordProtectedError(input.name);
    // How many problems qpdf reported and worked around (data.warnings is the list every tool's run leaves out).
    const qpdfWarnings = r.stderr.split('\n').filter((l) => /WARNING/.test(l)).length;
    if (r.code !== 2) return { outputs: [pdfOutput(out)], data: { method: 'qpdf', repaired: r.code === 3, qpdfWarnings } };
    // qpdf gave up (e.g. no trailer at all): Ghostscript rebuilds from whatever page objects it finds.
    ctx.progress(50, 'rebuilding');
    try {
      await pdfwrite(input.path, out, ['-dPDFSTOPONERROR=false'], { signal: ctx.signal, timeoutMs: 180_000, name: input.name });
      const check = await exec(bin, ['--show-npages', out], { signal: ctx.signal, timeoutMs: 60_000, okCodes: [0, 3] });
      const pages = Number(check.stdout.trim());
      if (!(pages > 0)) throw new Error('no pages');
      return { outputs: [pdfOutput(out)], data: { method: 'ghostscript', repaired: true, pages, qpdfWarnings } };
    } catch (e) {
      if (e instanceof KilnError && (e.code === 'CANCELLED' || e.code === 'TIMEOUT')) throw e;
      throw new KilnError(
        'UNSUPPORTED_INPUT',
        `${input.name} is damaged beyond repair: ${withName(r.stderr.split('\n').filter(Boolean).pop() ?? 'no readable pages', input.path, input.name)}`,
        { reason: 'pdf-unrepairable' },
      );
    }
  },
});
