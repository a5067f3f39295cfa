/**
 * PDF → DOCX by layout analysis. poppler's `pdftohtml -xml` gives every text fragment with its
 * position, font size, bold/italic, and extracts the page images with their boxes; we rebuild lines
 * (fragments on one baseline), paragraphs (lines of one size close together), headings (sizes well
 * above the body text) and place images in reading order, then write the DOCX with the `docx` package.
 *
 * LibreOffice's PDF import was measured too: it turns each line into an absolutely positioned text
 * frame (a drawing), which looks right but cannot be edited as flowing text, so it is not used.
 * docs/DOCUMENTS.md lists what survives and what does not.
 */
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { exec } from '../../../core/process.js';
import { defineTool } from '../../../core/tool.js';
import { requireEngine } from '../../../engines/registry.js';
import { outputFile } from '../../_shared/output.js';
import { openPdf, PDF_ACCEPT } from '../_shared/pdf-input.js';

interface Frag {
  top: number;
  left: number;
  width: number;
  height: number;
  size: number;
  text: string;
  bold: boolean;
  italic: boolean;
}
interface Img {
  top: number;
  left: number;
  width: number;
  height: number;
  src: string;
}
interface Page {
  width: number;
  height: number;
  frags: Frag[];
  images: Img[];
}
interface Line {
  top: number;
  bottom: number;
  left: number;
  size: number;
  runs: { text: string; bold: boolean; italic: boolean }[];
}
type Block = { kind: 'para'; top: number; left: number; size: number; lines: Line[] } | { kind: 'image'; top: number; img: Img };

const decode = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, '&');

const attr = (tag: string, name: string) => {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(tag);
  return m ? m[1]! : '';
};

/** Parses pdftohtml's XML (a flat, regular format) into pages. */
export function parsePdfXml(xml: string): Page[] {
  const fonts = new Map<string, number>();
  const pages: Page[] = [];
  for (const pm of xml.matchAll(/<page\b([^>]*)>([\s\S]*?)<\/page>/g)) {
    const head = pm[1]!;
    const body = pm[2]!;
    const page: Page = { width: Number(attr(head, 'width')), height: Number(attr(head, 'height')), frags: [], images: [] };
    for (const fm of body.matchAll(/<fontspec\b([^>]*)\/>/g)) fonts.set(attr(fm[1]!, 'id'), Number(attr(fm[1]!, 'size')));
    for (const im of body.matchAll(/<image\b([^>]*)\/>/g)) {
      const t = im[1]!;
      page.images.push({
        top: +attr(t, 'top'),
        left: +attr(t, 'left'),
        width: +attr(t, 'width'),
        height: +attr(t, 'height'),
        src: decode(attr(t, 'src')),
      });
    }
    for (const tm of body.matchAll(/<text\b([^>]*)>([\s\S]*?)<\/text>/g)) {
      const t = tm[1]!;
      const inner = tm[2]!;
      const text = decode(inner.replace(/<[^>]+>/g, ''));
      if (!text.trim()) continue;
      page.frags.push({
        top: +attr(t, 'top'),
        left: +attr(t, 'left'),
        width: +attr(t, 'width'),
        height: +attr(t, 'height'),
        size: fonts.get(attr(t, 'font')) ?? +attr(t, 'height'),
        text,
        bold: /<b>/.test(inner),
        italic: /<i>/.test(inner),
      });
    }
    pages.push(page);
  }
  return pages;
}

function toLines(frags: Frag[]): Line[] {
  const sorted = [...frags].sort((a, b) => a.top - b.top || a.left - b.left);
  const lines: { frags: Frag[]; top: number; bottom: number }[] = [];
  for (const f of sorted) {
    // Same line: vertical overlap of at least half the smaller height.
    const line = lines.find(
      (l) => Math.min(l.bottom, f.top + f.height) - Math.max(l.top, f.top) >= Math.min(f.height, l.bottom - l.top) / 2,
    );
    if (line) {
      line.frags.push(f);
      line.top = Math.min(line.top, f.top);
      line.bottom = Math.max(line.bottom, f.top + f.height);
    } else lines.push({ frags: [f], top: f.top, bottom: f.top + f.height });
  }
  return lines
    .map((l) => {
      const fr = l.frags.sort((a, b) => a.left - b.left);
      const runs: Line['runs'] = [];
      let prevEnd: number | undefined;
      for (const f of fr) {
        let text = f.text;
        // pdftohtml drops the space between fragments that are apart on the line.
        if (prevEnd !== undefined && f.left - prevEnd > f.size * 0.2 && !/\s$/.test(runs.at(-1)?.text ?? '') && !/^\s/.test(text))
          text = ' ' + text;
        const last = runs.at(-1);
        if (last && last.bold === f.bold && last.italic === f.italic) last.text += text;
        else runs.push({ text, bold: f.bold, italic: f.italic });
        prevEnd = f.left + f.width;
      }
      const size = fr.reduce((m, f) => (f.text.length > 0 && f.size > m ? f.size : m), 0);
      return { top: l.top, bottom: l.bottom, left: fr[0]!.left, size, runs };
    })
    .sort((a, b) => a.top - b.top || a.left - b.left);
}

function toBlocks(page: Page): Block[] {
  const blocks: Block[] = [];
  let para: Extract<Block, { kind: 'para' }> | undefined;
  for (const line of toLines(page.frags)) {
    const prev = para?.lines.at(-1);
    const gap = prev ? line.top - prev.bottom : Infinity;
    const lineH = line.bottom - line.top;
    const sameStyle = para && Math.abs(para.size - line.size) <= 1;
    // A paragraph continues when the next line follows closely in the same size; a clearly indented
    // first line or a bigger gap starts a new one.
    if (para && sameStyle && gap < lineH * 0.6 && line.left - para.left < line.size * 2.5) para.lines.push(line);
    else {
      para = { kind: 'para', top: line.top, left: line.left, size: line.size, lines: [line] };
      blocks.push(para);
    }
  }
  for (const img of page.images) blocks.push({ kind: 'image', top: img.top, img });
  return blocks.sort((a, b) => a.top - b.top);
}

/** The font size carrying the most characters: the body text. */
function bodySize(pages: Page[]): number {
  const count = new Map<number, number>();
  for (const p of pages) for (const f of p.frags) count.set(Math.round(f.size), (count.get(Math.round(f.size)) ?? 0) + f.text.length);
  let best = 12;
  let n = -1;
  for (const [s, c] of count) if (c > n) [best, n] = [s, c];
  return best;
}

function paragraphRuns(lines: Line[]): Line['runs'] {
  const runs: Line['runs'] = [];
  lines.forEach((l, i) => {
    l.runs.forEach((r, j) => {
      let text = r.text;
      if (j === l.runs.length - 1 && i < lines.length - 1) {
        // A word hyphenated at the line end is joined again; other line ends become a space.
        const next = lines[i + 1]!.runs[0]?.text ?? '';
        if (/[a-zà-ÿ]-$/i.test(text) && /^[a-zà-ÿ]/.test(next)) text = text.slice(0, -1);
        else if (!/\s$/.test(text)) text += ' ';
      }
      const last = runs.at(-1);
      if (last && last.bold === r.bold && last.italic === r.italic) last.text += text;
      else runs.push({ ...r, text });
    });
  });
  return runs;
}

export default defineTool({
  id: 'pdf-to-wordprocessor',
  section: 'pdf',
  group: 'document',
  summary: 'Convert a text-based PDF to an editable word-processor document (DOCX).',
  description:
    'Rebuilds flowing paragraphs, headings, bold/italic and images (in reading order) from the positioned text of the PDF ' +
    '(poppler), one page break per PDF page. Tables become tab-free paragraphs, multi-column pages are read line by line, ' +
    'and scanned pages carry no text: run ocr-pdf first.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({}),
  needs: { engines: ['qpdf', 'poppler'] },
  execution: 'long',
  output: 'DOCX document',
  examples: ['paper.pdf -o paper.docx'],
  async run(ctx, { files }) {
    // qpdf's gate first: a password-protected or unreadable PDF gets the same clear error as in every PDF tool.
    const pdf = await openPdf(ctx, files[0]!);
    const poppler = await requireEngine('poppler');
    const pdftohtml = path.join(path.dirname(poppler), 'pdftohtml');
    const base = path.join(ctx.workDir, 'pdf2xml', 'doc');
    await mkdir(path.dirname(base), { recursive: true });
    ctx.progress(5, 'reading');
    // -zoom 1: coordinates in PDF points. Images are written next to the XML as PNG.
    await exec(pdftohtml, ['-xml', '-q', '-zoom', '1', '-fmt', 'png', '-hidden', pdf.path, base], {
      signal: ctx.signal,
      timeoutMs: 300_000,
      failCode: 'UNSUPPORTED_INPUT',
    });
    const xml = await readFile(`${base}.xml`, 'utf8').catch(() => {
      throw new KilnError('UNSUPPORTED_INPUT', 'The PDF could not be read.');
    });
    const pages = parsePdfXml(xml);
    if (!pages.length) throw new KilnError('UNSUPPORTED_INPUT', 'The PDF has no pages.');
    if (pages.every((p) => p.frags.length === 0 && p.images.length === 0)) {
      throw new KilnError('UNSUPPORTED_INPUT', 'The PDF has no text layer (a scan?): run ocr-pdf first.', { reason: 'no-text-layer' });
    }
    ctx.progress(40, 'layout');
    const d = await import('docx');
    const sharp = await (await import('../../../engines/sharp.js')).getSharp();
    const body = bodySize(pages);
    const imgDir = path.dirname(base);
    const known = new Set(await readdir(imgDir));
    const children: InstanceType<typeof d.Paragraph>[] = [];
    for (const [pi, page] of pages.entries()) {
      if (ctx.signal.aborted) throw new KilnError('CANCELLED', 'The run was cancelled.');
      let first = true;
      for (const b of toBlocks(page)) {
        const pageBreakBefore = first && pi > 0;
        first = false;
        if (b.kind === 'image') {
          const file = path.basename(b.img.src);
          if (!known.has(file)) continue;
          const data = await readFile(path.join(imgDir, file));
          // PNG as written by poppler; re-encode anything odd so Word accepts it.
          const png = await sharp(data)
            .png()
            .toBuffer()
            .catch(() => undefined);
          if (!png) continue;
          const px = (pt: number) => Math.max(1, Math.round((pt * 96) / 72));
          children.push(
            new d.Paragraph({
              pageBreakBefore,
              children: [new d.ImageRun({ type: 'png', data: png, transformation: { width: px(b.img.width), height: px(b.img.height) } })],
            }),
          );
          continue;
        }
        const ratio = b.size / body;
        const heading =
          ratio >= 1.6
            ? d.HeadingLevel.HEADING_1
            : ratio >= 1.25
              ? d.HeadingLevel.HEADING_2
              : ratio >= 1.12
                ? d.HeadingLevel.HEADING_3
                : undefined;
        const runs = paragraphRuns(b.lines).map(
          (r) =>
            new d.TextRun({
              text: r.text,
              bold: r.bold || undefined,
              italics: r.italic || undefined,
              size: heading ? undefined : Math.round(b.size * 2),
            }),
        );
        children.push(new d.Paragraph({ heading, pageBreakBefore, children: runs, spacing: { after: Math.round(b.size * 8) } }));
      }
    }
    const first = pages[0]!;
    const marginPt = Math.max(18, Math.min(72, Math.min(...pages.flatMap((p) => p.frags.map((f) => f.left)), 72)));
    const doc = new d.Document({
      creator: 'kiln',
      styles: { default: { document: { run: { font: 'Liberation Serif' } } } },
      sections: [
        {
          properties: {
            page: {
              size: { width: Math.round(first.width * 20), height: Math.round(first.height * 20) },
              margin: {
                top: Math.round(marginPt * 20),
                bottom: Math.round(marginPt * 20),
                left: Math.round(marginPt * 20),
                right: Math.round(marginPt * 20),
              },
            },
          },
          children,
        },
      ],
    });
    ctx.progress(85, 'writing');
    const out = ctx.out('docx');
    await writeFile(out, await d.Packer.toBuffer(doc));
    return { outputs: [outputFile(out)] };
  },
});
