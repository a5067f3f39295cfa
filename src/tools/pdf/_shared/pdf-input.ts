/** What every PDF tool does first and last: vet the input with qpdf, name the output. */
import { rename } from 'node:fs/promises';
import path from 'node:path';
import type { InputFile, OutputFile, RunContext } from '../../../core/tool.js';
import { inspectPdf, qpdf, type PdfInfo } from '../../../engines/qpdf.js';
import { outputFile } from '../../_shared/output.js';

export interface OpenedPdf extends PdfInfo {
  /** The file to process: the input itself, or a decrypted copy (see below). */
  path: string;
  name: string;
  /** The encrypted input `path` is a decrypted copy of (owner restrictions only), for keepEncryption. */
  decryptedFrom?: string;
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
    return { ...info, path: copy, name: file.name, decryptedFrom: file.path };
  }
  return { ...info, path: file.path, name: file.name };
}

/**
 * Gives `out` the encryption of the input it was made from when that input was opened decrypted: a PDF
 * with owner restrictions (no printing, no copying…) came back from watermark, crop, grayscale… without
 * them, while the qpdf page tools kept them. qpdf copies the encryption dictionary, so the passwords and
 * permissions are the original's; the empty user password is the one it opened with.
 */
export async function keepEncryption(ctx: RunContext, pdf: OpenedPdf, out: string): Promise<void> {
  if (!pdf.decryptedFrom) return;
  const tmp = path.join(ctx.workDir, `encrypted-${process.hrtime.bigint()}.pdf`);
  await qpdf([`--copy-encryption=${pdf.decryptedFrom}`, '--encryption-file-password=', out, tmp], { signal: ctx.signal });
  await rename(tmp, out);
}

export function pdfOutput(p: string): OutputFile {
  return outputFile(p, { contentType: 'application/pdf' });
}

export const PDF_ACCEPT = ['.pdf'];
