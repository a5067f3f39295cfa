import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it, before } from 'node:test';
import { PDFDocument, PDFHexString, PDFName, PDFNull, PDFString, type PDFRef } from '@cantoo/pdf-lib';
import { tempDir } from '../../helpers/fixtures.js';
import { makeTextPdf, numbered, pageCount, pageTexts, runPdfTool } from './pdf-helpers.js';

const dir = tempDir('kiln-pdf-bookmarks-');

/** Bookmarks as a reader sees them: depth, title and the text of the page each one opens ('-' for none). */
function bookmarks(file: string): string[] {
  const json = JSON.parse(execFileSync('qpdf', ['--json', '--json-key=outlines', file]).toString()) as { outlines: Outline[] };
  const texts = pageTexts(file);
  const out: string[] = [];
  const walk = (items: Outline[], depth: number) => {
    for (const o of items) {
      out.push(`${'  '.repeat(depth)}${o.title} -> ${o.destpageposfrom1 ? texts[o.destpageposfrom1 - 1] : '-'}`);
      walk(o.kids, depth + 1);
    }
  };
  walk(json.outlines, 0);
  return out;
}
interface Outline {
  title: string;
  destpageposfrom1: number | null;
  kids: Outline[];
}

/**
 * Six pages "Page 1"…"Page 6" with a two-level outline written by hand (pdf-lib has no outline API):
 * Part A → 1 (kid "Über §2" → 2), Part B → 4 (kid "B.1" → 5).
 */
async function outlinedPdf(file: string): Promise<string> {
  const doc = await PDFDocument.load(readFileSync(await makeTextPdf(path.join(dir, 'plain.pdf'), numbered(6))));
  const pages = doc.getPages().map((p) => p.ref);
  const ctx = doc.context;
  const root = ctx.nextRef();
  const item = (title: string, page: number, parent: PDFRef) => {
    const ref = ctx.nextRef();
    const dict = ctx.obj({ Parent: parent, Dest: [pages[page - 1]!, PDFName.of('XYZ'), PDFNull, PDFNull, PDFNull] });
    dict.set(PDFName.of('Title'), PDFHexString.fromText(title));
    return { ref, dict };
  };
  const a = item('Part A', 1, root);
  const b = item('Part B', 4, root);
  const a1 = item('Über §2', 2, a.ref);
  const b1 = item('B.1', 5, b.ref);
  a.dict.set(PDFName.of('Next'), b.ref);
  b.dict.set(PDFName.of('Prev'), a.ref);
  for (const [p, k] of [
    [a, a1],
    [b, b1],
  ] as const) {
    p.dict.set(PDFName.of('First'), k.ref);
    p.dict.set(PDFName.of('Last'), k.ref);
    p.dict.set(PDFName.of('Count'), ctx.obj(1));
  }
  for (const x of [a, b, a1, b1]) ctx.assign(x.ref, x.dict);
  ctx.assign(root, ctx.obj({ Type: 'Outlines', First: a.ref, Last: b.ref, Count: 4 }));
  doc.catalog.set(PDFName.of('Outlines'), root);
  writeFileSync(file, await doc.save());
  return file;
}

describe('bookmarks through page operations', () => {
  let src: string;
  before(async () => {
    src = await outlinedPdf(path.join(dir, 'outlined.pdf'));
    assert.deepEqual(bookmarks(src), ['Part A -> Page 1', '  Über §2 -> Page 2', 'Part B -> Page 4', '  B.1 -> Page 5']);
  });

  it("merge-pdf keeps every file's bookmarks, pointing at its pages in the merged file", async () => {
    const other = await makeTextPdf(path.join(dir, 'other.pdf'), numbered(2, 'Other'));
    const r = await runPdfTool(dir, 'merge-pdf', [src, other, src]);
    assert.equal(pageCount(r.file!), 14);
    assert.deepEqual(bookmarks(r.file!), [
      'Part A -> Page 1',
      '  Über §2 -> Page 2',
      'Part B -> Page 4',
      '  B.1 -> Page 5',
      'Part A -> Page 1',
      '  Über §2 -> Page 2',
      'Part B -> Page 4',
      '  B.1 -> Page 5',
    ]);
    // The second copy's bookmarks open pages 9 and 12 (after 6 + 2 pages), not the first copy's.
    const json = JSON.parse(execFileSync('qpdf', ['--json', '--json-key=outlines', r.file!]).toString()) as { outlines: Outline[] };
    assert.deepEqual(
      json.outlines.map((o) => o.destpageposfrom1),
      [1, 4, 9, 12],
    );
    assert.equal(r.data?.bookmarks, 8);
    assert.match(execFileSync('qpdf', ['--check', r.file!]).toString(), /No syntax or stream encoding errors/);
  });

  it('extract-pages drops the bookmarks of pages left out instead of keeping ones that open nothing', async () => {
    const r = await runPdfTool(dir, 'extract-pages', [src], { range: '4-6' });
    assert.deepEqual(bookmarks(r.file!), ['Part B -> Page 4', '  B.1 -> Page 5']);
  });

  it('remove-pages keeps a heading whose own page went when a bookmark under it stays', async () => {
    const r = await runPdfTool(dir, 'remove-pages', [src], { pages: '1' });
    assert.deepEqual(bookmarks(r.file!), ['Part A -> -', '  Über §2 -> Page 2', 'Part B -> Page 4', '  B.1 -> Page 5']);
  });

  it('organize-pdf: bookmarks follow their pages to the new order', async () => {
    const r = await runPdfTool(dir, 'organize-pdf', [src], { order: 'z-1' });
    assert.deepEqual(pageTexts(r.file!)[0], 'Page 6');
    assert.deepEqual(bookmarks(r.file!), ['Part A -> Page 1', '  Über §2 -> Page 2', 'Part B -> Page 4', '  B.1 -> Page 5']);
  });

  it('split-pdf every N gives each part the bookmarks of its pages', async () => {
    const r = await runPdfTool(dir, 'split-pdf', [src], { mode: 'every', everyN: 3 });
    const parts = path.join(dir, 'parts');
    mkdirSync(parts, { recursive: true });
    execFileSync('unzip', ['-o', '-q', r.file!, '-d', parts]);
    assert.deepEqual(readdirSync(parts).sort(), ['part-1.pdf', 'part-2.pdf']);
    assert.deepEqual(bookmarks(path.join(parts, 'part-1.pdf')), ['Part A -> Page 1', '  Über §2 -> Page 2']);
    assert.deepEqual(bookmarks(path.join(parts, 'part-2.pdf')), ['Part B -> Page 4', '  B.1 -> Page 5']);
  });
});

/** Name → contents of every attached file (qpdf --list-attachments / --show-attachment). */
function attachments(file: string): Record<string, string> {
  const keys = execFileSync('qpdf', ['--list-attachments', file])
    .toString()
    .split('\n')
    .map((l) => /^(.+) -> \d+,\d+$/.exec(l)?.[1])
    .filter((k): k is string => !!k);
  return Object.fromEntries(keys.map((k) => [k, execFileSync('qpdf', [`--show-attachment=${k}`, file]).toString()]));
}

describe('attached files through page operations', () => {
  let src: string;
  before(async () => {
    const doc = await PDFDocument.load(readFileSync(await makeTextPdf(path.join(dir, 'plain4.pdf'), numbered(4))));
    await doc.attach(Buffer.from('minutes of the meeting'), 'notes.txt', { mimeType: 'text/plain' });
    src = path.join(dir, 'attached.pdf');
    writeFileSync(src, await doc.save());
    assert.deepEqual(attachments(src), { 'notes.txt': 'minutes of the meeting' });
  });

  it('merge-pdf keeps the attachments of every file, a clashing name prefixed with its file number', async () => {
    const plain = await makeTextPdf(path.join(dir, 'plain2.pdf'), numbered(2));
    const r = await runPdfTool(dir, 'merge-pdf', [src, plain, src]);
    assert.equal(pageCount(r.file!), 10);
    assert.deepEqual(attachments(r.file!), { 'notes.txt': 'minutes of the meeting', '3-notes.txt': 'minutes of the meeting' });
    assert.equal(r.data?.attachments, 2);
  });

  it('split-pdf every N keeps the attachments in every part, as extract-pages does', async () => {
    const r = await runPdfTool(dir, 'split-pdf', [src], { mode: 'every', everyN: 2 });
    const parts = path.join(dir, 'att-parts');
    mkdirSync(parts, { recursive: true });
    execFileSync('unzip', ['-o', '-q', r.file!, '-d', parts]);
    for (const part of ['part-1.pdf', 'part-2.pdf']) {
      assert.equal(pageCount(path.join(parts, part)), 2);
      assert.deepEqual(attachments(path.join(parts, part)), { 'notes.txt': 'minutes of the meeting' }, part);
    }
    const e = await runPdfTool(dir, 'extract-pages', [src], { range: '3' });
    assert.deepEqual(attachments(e.file!), { 'notes.txt': 'minutes of the meeting' });
  });
});

describe('tools that make new pages or rewrite through Ghostscript say what they could not keep', () => {
  let form: string;
  let outlined: string;
  before(async () => {
    const doc = await PDFDocument.load(readFileSync(await makeTextPdf(path.join(dir, 'plain-form.pdf'), numbered(2))));
    const field = doc.getForm().createTextField('name');
    field.setText('Alice Example');
    field.addToPage(doc.getPage(0), { x: 20, y: 200, width: 200, height: 30 });
    form = path.join(dir, 'form.pdf');
    writeFileSync(form, await doc.save());
    assert.match(pageTexts(form)[0]!, /Alice Example/);
    outlined = await outlinedPdf(path.join(dir, 'outlined-2.pdf'));
  });

  it("nup-pdf and booklet-pdf draw filled form values on the sheets (they are annotations, outside the page's content)", async () => {
    for (const id of ['nup-pdf', 'booklet-pdf']) {
      const r = await runPdfTool(dir, id, [form]);
      assert.equal(pageCount(r.file!), id === 'nup-pdf' ? 1 : 2, id);
      assert.match(pageTexts(r.file!).join(' '), /Alice Example/, id);
      assert.deepEqual(r.data?.warnings, ['the form (1 field) was flattened: filled values stay visible but can no longer be edited'], id);
    }
  });

  it('nup-pdf and booklet-pdf keep the title, author, subject, keywords and creator (the new document had none)', async () => {
    const doc = await PDFDocument.load(
      readFileSync(await makeTextPdf(path.join(dir, 'titled.pdf'), numbered(3), { title: 'Rapport — 年度报告' })),
    );
    doc.setAuthor('Zoë Ångström');
    doc.setSubject('Handout');
    doc.setKeywords(['annual, report']);
    doc.setCreator('Writer 7');
    const src = path.join(dir, 'titled-info.pdf');
    writeFileSync(src, await doc.save());
    for (const id of ['nup-pdf', 'booklet-pdf']) {
      const r = await runPdfTool(dir, id, [src]);
      const info = execFileSync('pdfinfo', [r.file!]).toString();
      assert.match(info, /Title:\s+Rapport — 年度报告\n/, id);
      assert.match(info, /Author:\s+Zoë Ångström\n/, id);
      assert.match(info, /Subject:\s+Handout\n/, id);
      assert.match(info, /Keywords:\s+annual, report\n/, id);
      assert.match(info, /Creator:\s+Writer 7\n/, id);
    }
  });

  it('nup-pdf warns that the bookmarks are gone', async () => {
    const r = await runPdfTool(dir, 'nup-pdf', [outlined], { perSheet: 2 });
    assert.equal(pageCount(r.file!), 3);
    assert.deepEqual(r.data?.warnings, ['4 bookmarks dropped']);
  });

  it('grayscale-pdf warns that Ghostscript flattened the form; bookmarks it keeps are not reported', async () => {
    const r = await runPdfTool(dir, 'grayscale-pdf', [form]);
    assert.match(pageTexts(r.file!)[0]!, /Alice Example/);
    assert.deepEqual(r.data?.warnings, ['the form (1 field) was flattened: filled values stay visible but can no longer be edited']);
    const g = await runPdfTool(dir, 'grayscale-pdf', [outlined]);
    assert.equal(bookmarks(g.file!).length, 4);
    assert.equal(g.data?.warnings, undefined);
  });

  it('the document language (/Lang) outlives Ghostscript, a merge and new sheets', async () => {
    const withLang = async (name: string, lang: string | undefined, pages: number) => {
      const file = await makeTextPdf(path.join(dir, name), numbered(pages));
      const doc = await PDFDocument.load(readFileSync(file));
      if (lang) doc.catalog.set(PDFName.of('Lang'), PDFString.of(lang));
      writeFileSync(file, await doc.save());
      return file;
    };
    const langOf = (file: string) => {
      // qpdf's JSON of the catalog: "u:" is its decoded text.
      const j = JSON.parse(execFileSync('qpdf', ['--json', '--json-key=qpdf', file]).toString());
      const objects = j.qpdf[1];
      const catalog = objects[`obj:${objects.trailer.value['/Root']}`].value;
      return catalog['/Lang'];
    };
    const german = await withLang('lang-de.pdf', 'de-DE', 4);
    const none = await withLang('lang-none.pdf', undefined, 1);
    const french = await withLang('lang-fr.pdf', 'fr', 1);
    for (const id of ['grayscale-pdf', 'pdfa-convert', 'nup-pdf', 'booklet-pdf', 'compress-pdf']) {
      const r = await runPdfTool(dir, id, [german]);
      assert.equal(langOf(r.file!), 'u:de-DE', id);
    }
    // A merge speaks the language of the first file that declares one.
    const merged = await runPdfTool(dir, 'merge-pdf', [none, german, french]);
    assert.equal(pageCount(merged.file!), 6);
    assert.equal(langOf(merged.file!), 'u:de-DE');
    // None declared, none made up.
    assert.equal(langOf((await runPdfTool(dir, 'grayscale-pdf', [none])).file!), undefined);
  });
  it('reads the information fields and the language in one go as readDocInfo and readLang do apart', async () => {
    const { readDocInfo, readDocInfoAndLang, readLang } = await import('../../../src/engines/pdf-info.js');
    const titled = await makeTextPdf(path.join(dir, 'titled.pdf'), ['T'], { title: 'Bericht — 报告' });
    const doc = await PDFDocument.load(readFileSync(titled));
    doc.catalog.set(PDFName.of('Lang'), PDFString.of('de-DE'));
    doc.setAuthor('Zoë');
    writeFileSync(titled, await doc.save());
    // qpdf --empty writes no /Info at all.
    const bare = path.join(dir, 'no-info.pdf');
    execFileSync('qpdf', ['--empty', '--pages', titled, '--', bare]);
    const both = await readDocInfoAndLang(titled);
    assert.equal(both.lang, 'de-DE');
    assert.equal(both.info.title, 'Bericht — 报告');
    assert.equal(both.info.author, 'Zoë');
    for (const file of [titled, bare]) {
      assert.deepEqual(await readDocInfoAndLang(file), { info: await readDocInfo(file), lang: await readLang(file) }, file);
    }
    assert.deepEqual(await readDocInfoAndLang(bare), { info: {}, lang: undefined });
  });

  it('writes the information fields and the language in one pass, making /Info where there was none', async () => {
    const { readDocInfoAndLang, writeDocFields } = await import('../../../src/engines/pdf-info.js');
    const bare = path.join(dir, 'fields-bare.pdf');
    execFileSync('qpdf', ['--empty', '--pages', await makeTextPdf(path.join(dir, 'fields-src.pdf'), numbered(2)), '--', bare]);
    const work = path.join(dir, 'fields-work');
    mkdirSync(work, { recursive: true });
    const out = path.join(dir, 'fields-out.pdf');
    await writeDocFields(bare, out, { info: { title: 'Τίτλος 📄', keywords: 'a, b' }, lang: 'el' }, { workDir: work });
    assert.deepEqual(await readDocInfoAndLang(out), { info: { title: 'Τίτλος 📄', keywords: 'a, b' }, lang: 'el' });
    assert.equal(pageCount(out), 2);
    // Each alone leaves the other part as it was.
    const relang = path.join(dir, 'fields-relang.pdf');
    await writeDocFields(out, relang, { lang: 'en-GB' }, { workDir: work });
    assert.deepEqual(await readDocInfoAndLang(relang), { info: { title: 'Τίτλος 📄', keywords: 'a, b' }, lang: 'en-GB' });
    const retitle = path.join(dir, 'fields-retitle.pdf');
    await writeDocFields(relang, retitle, { info: { title: 'Neu' } }, { workDir: work });
    assert.deepEqual(await readDocInfoAndLang(retitle), { info: { title: 'Neu', keywords: 'a, b' }, lang: 'en-GB' });
    assert.match(execFileSync('qpdf', ['--check', retitle]).toString(), /No syntax or stream encoding errors/);
  });

  it('reads text fields qpdf gives as bytes: PDFDocEncoding past ASCII', async () => {
    const { readDocInfo, readLang } = await import('../../../src/engines/pdf-info.js');
    const file = await makeTextPdf(path.join(dir, 'pdfdoc.pdf'), ['P']);
    const doc = await PDFDocument.load(readFileSync(file));
    // "Zoë €• ﬁ˘" in PDFDocEncoding: ë is Latin-1, € (0xA0), • (0x80), ﬁ (0x93) and ˘ (0x18) are its own.
    const info = doc.context.obj({});
    info.set(PDFName.of('Author'), PDFHexString.of('5a6feb20a080209318'));
    info.set(PDFName.of('Subject'), PDFHexString.of(''));
    // UTF-16 without its byte-order mark ("Ti"): bytes, not text.
    info.set(PDFName.of('Keywords'), PDFHexString.of('00540069'));
    doc.context.trailerInfo.Info = doc.context.register(info);
    doc.catalog.set(PDFName.of('Lang'), PDFHexString.of('6eef'));
    writeFileSync(file, await doc.save());
    const raw = JSON.parse(execFileSync('qpdf', ['--json', '--json-key=qpdf', file]).toString()).qpdf[1];
    const infoRef = raw.trailer.value['/Info'];
    assert.match(raw[`obj:${infoRef}`].value['/Author'], /^b:/, 'qpdf gives these bytes, not text');
    const fields = await readDocInfo(file);
    assert.equal(fields.author, 'Zoë €• ﬁ˘');
    assert.equal(fields.subject, undefined, 'an empty string is no field');
    assert.equal(fields.keywords, undefined, 'NULs are no PDFDocEncoding text');
    assert.equal(await readLang(file), 'nï');
  });

  it('merge-pdf keeps bookmarks, the first title and the first language together', async () => {
    const { readDocInfoAndLang } = await import('../../../src/engines/pdf-info.js');
    const titled = await makeTextPdf(path.join(dir, 'merge-titled.pdf'), numbered(1, 'Cover'), { title: 'Handbuch' });
    const doc = await PDFDocument.load(readFileSync(await outlinedPdf(path.join(dir, 'merge-outlined.pdf'))));
    doc.catalog.set(PDFName.of('Lang'), PDFString.of('de-AT'));
    doc.setAuthor('Zoë');
    const outlinedDe = path.join(dir, 'merge-outlined-de.pdf');
    writeFileSync(outlinedDe, await doc.save());
    const r = await runPdfTool(dir, 'merge-pdf', [titled, outlinedDe]);
    assert.equal(pageCount(r.file!), 7);
    assert.deepEqual(bookmarks(r.file!), ['Part A -> Page 1', '  Über §2 -> Page 2', 'Part B -> Page 4', '  B.1 -> Page 5']);
    const { info, lang } = await readDocInfoAndLang(r.file!);
    assert.equal(info.title, 'Handbuch');
    assert.equal(info.author, 'Zoë');
    assert.equal(lang, 'de-AT');
  });
});
