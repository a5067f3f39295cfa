/** What every PDF tool does first and last: vet the input with qpdf, name the output. */
import path from 'node:path';
import type { InputFile, OutputFile, RunContext } from '../../../core/tool.js';
import { inspectPdf, qpdf, type PdfInfo } from '../../../engines/qpdf.js';
import { outputFile } from '../../_shared/output.js';

export interface OpenedPdf extends PdfInfo {
  /** The file to process: the input itself, or a decrypted copy (see below). */
  path: string;
  name: string;
}

/**
 * Checks the input opens (UNSUPPORTED_INPUT naming unlock-pdf when it needs a password, or naming
 * repair-pdf when it is corrupt). PDFs encrypted with an empty user password open in every viewer;
 * in-process pdf-lib cannot decrypt, so `decrypt` gives it a qpdf-decrypted copy in the workDir.
 */
export async function openPdf(ctx: RunContext, file: InputFile, opts: { decrypt?: boolean } = {}): Promise<OpenedPdf> {
  const info = await inspectPdf(file.path, file.name, ctx.signal);
  if (info.encrypted && opts.decrypt) {
    const copy = path.join(ctx.workDir, `decrypted-${process.hrtime.bigint()}.pdf`);
    await qpdf(['--decrypt', file.path, copy], { signal: ctx.signal });
    return { ...info, path: copy, name: file.name };
  }
  return { ...info, path: file.path, name: file.name };
}

export function pdfOutput(p: string): OutputFile {
  return outputFile(p, { contentType: 'application/pdf' });
}

export const PDF_ACCEPT = ['.pdf'];
