/**
 * Tools that build new pages (n-up, booklet) or have Ghostscript rewrite the file (grayscale, PDF/A,
 * compress) cannot carry everything of a PDF: Ghostscript flattens the interactive form, new sheets have
 * no bookmarks, form or attachments. What went is said through ctx.warn, never dropped without a word.
 */
import { rename } from 'node:fs/promises';
import path from 'node:path';
import type { RunContext } from '../../../core/tool.js';
import { readLang, writeLang } from '../../../engines/pdf-info.js';
import { getPdfLib, loadPdf } from '../../../engines/pdf-lib.js';
import { flattenAnnotations } from '../../../engines/qpdf.js';
import { countOutlineItems, readStructure, type PdfStructure } from '../../../engines/qpdf-structure.js';
import type { OpenedPdf } from './pdf-input.js';

type PdfDoc = Awaited<ReturnType<typeof loadPdf>>;

const n = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** The parts of `before` that `out` no longer has, each as one ctx.warn. */
export async function warnLostStructure(ctx: RunContext, before: PdfStructure, out: string): Promise<void> {
  const after = await readStructure(out, { signal: ctx.signal });
  if (before.formFields > 0 && after.formFields === 0)
    ctx.warn(`the form (${n(before.formFields, 'field')}) was flattened: filled values stay visible but can no longer be edited`);
  const bookmarks = countOutlineItems(before.outline) - countOutlineItems(after.outline);
  if (bookmarks > 0) ctx.warn(`${n(bookmarks, 'bookmark')} dropped`);
  const attachments = before.attachments.filter((k) => !after.attachments.includes(k));
  if (attachments.length) ctx.warn(`${n(attachments.length, 'attached file')} dropped (${attachments.slice(0, 5).join(', ')})`);
}

/**
 * Gives `out` back the language its input declared (the catalog's /Lang): Ghostscript's rewrite
 * (grayscale, PDF/A) and a merge into an empty document dropped it, and a screen reader then read a
 * German report with English rules.
 */
export async function keepLanguage(ctx: RunContext, lang: string | undefined, out: string): Promise<void> {
  if (!lang || (await readLang(out, { signal: ctx.signal })) === lang) return;
  const tmp = path.join(ctx.workDir, `lang-${process.hrtime.bigint()}.pdf`);
  await writeLang(out, tmp, lang, { signal: ctx.signal, workDir: ctx.workDir });
  await rename(tmp, out);
}

/**
 * The input of a tool that draws its pages onto new sheets, loaded in pdf-lib: annotations and filled
 * form fields live beside the page content, so drawing the page alone would lose them; when there are
 * any, they are drawn into the content first (as flatten-pdf does) and that copy is loaded. `before`
 * (the input's structure) is for warnLostStructure.
 */
export async function loadForImposition(ctx: RunContext, pdf: OpenedPdf): Promise<{ doc: PdfDoc; before: PdfStructure }> {
  const before = await readStructure(pdf.path, { signal: ctx.signal });
  const doc = await loadPdf(pdf.path, pdf.name, pdf.pages);
  if (!doc.getPages().some((p) => p.node.Annots()?.size())) return { doc, before };
  const flat = path.join(ctx.workDir, `flattened-${process.hrtime.bigint()}.pdf`);
  await flattenAnnotations(pdf.path, flat, { signal: ctx.signal });
  return { doc: await loadPdf(flat, pdf.name, pdf.pages), before };
}

/**
 * The new document the sheets of `src` go on, with its title, author, subject, keywords and creator: a
 * document made from scratch had none (an n-up handout of "Annual report" was untitled).
 */
export async function sheetsFor(src: PdfDoc): Promise<PdfDoc> {
  const { PDFDocument, PDFName, PDFString, PDFHexString } = await getPdfLib();
  const out = await PDFDocument.create();
  // And its language (the catalog's /Lang), which screen readers speak it in.
  const lang = src.catalog.lookup(PDFName.of('Lang'));
  if (lang instanceof PDFString || lang instanceof PDFHexString) out.catalog.set(PDFName.of('Lang'), lang);
  const title = src.getTitle();
  if (title) out.setTitle(title);
  const author = src.getAuthor();
  if (author) out.setAuthor(author);
  const subject = src.getSubject();
  if (subject) out.setSubject(subject);
  const keywords = src.getKeywords();
  if (keywords) out.setKeywords([keywords]); // one element: kept verbatim (pdf-lib joins a list with spaces)
  const creator = src.getCreator();
  if (creator) out.setCreator(creator);
  return out;
}
