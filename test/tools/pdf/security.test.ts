import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { KilnError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { makeTextPdf, numbered, pageCount, pageTexts, runPdfTool, tryRun } from './pdf-helpers.js';

const dir = tempDir('kiln-pdf-sec-');
let plain: string;

describe('protect-pdf and unlock-pdf', () => {
  before(async () => {
    plain = await makeTextPdf(path.join(dir, 'plain.pdf'), numbered(3, 'Secret page'));
  });

  it('encrypts with AES-256; opening needs the user password', async () => {
    const r = await runPdfTool(dir, 'protect-pdf', [plain], { userPassword: '-open sesame', ownerPassword: 'boss' });
    const enc = execFileSync('qpdf', ['--password=-open sesame', '--show-encryption', r.file!]).toString();
    assert.match(enc, /AESv3/); // qpdf's name for AES-256 (R6)
    assert.match(enc, /R = 6/);
    assert.notEqual(tryRun('qpdf', ['--show-npages', r.file!]).code, 0);
    assert.notEqual(tryRun('pdftotext', [r.file!, '-']).code, 0);
    assert.deepEqual(pageTexts(r.file!, '-open sesame'), ['Secret page 1', 'Secret page 2', 'Secret page 3']);
    assert.equal(r.data!.encryption, 'AES-256');
    // The owner password also opens it.
    assert.equal(tryRun('qpdf', ['--password=boss', '--show-npages', r.file!]).code, 0);
  });

  it('unlock removes the encryption with the right password, refuses a wrong one clearly', async () => {
    const locked = (await runPdfTool(dir, 'protect-pdf', [plain], { userPassword: 'pw1' })).file!;
    const bad = runPdfTool(dir, 'unlock-pdf', [locked], { password: 'nope' });
    await assert.rejects(bad, (e: KilnError) => e.code === 'VALIDATION_ERROR' && /password is not correct/.test(e.message));
    const r = await runPdfTool(dir, 'unlock-pdf', [locked], { password: 'pw1' });
    assert.match(execFileSync('qpdf', ['--show-encryption', r.file!]).toString(), /File is not encrypted/);
    assert.deepEqual(pageTexts(r.file!), ['Secret page 1', 'Secret page 2', 'Secret page 3']);
    assert.equal(r.data!.neededPassword, true);
    const notLocked = await runPdfTool(dir, 'unlock-pdf', [plain], { password: 'anything' });
    assert.deepEqual(notLocked.data, { wasEncrypted: false, neededPassword: false });
  });

  it('other tools answer UNSUPPORTED_INPUT naming unlock-pdf for an encrypted input', async () => {
    const locked = (await runPdfTool(dir, 'protect-pdf', [plain], { userPassword: 'pw2' })).file!;
    for (const [id, s] of [
      ['extract-pages', { range: '1' }],
      ['grayscale-pdf', {}],
      ['linearize-pdf', {}],
      ['repair-pdf', {}],
    ] as const) {
      await assert.rejects(
        runPdfTool(dir, id, [locked], s),
        (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && /password-protected/.test(e.message) && /unlock-pdf/.test(e.message),
        id,
      );
    }
  });

  it('a PDF with only an owner password (opens without one) is processed', async () => {
    const ownerOnly = path.join(dir, 'owner-only.pdf');
    execFileSync('qpdf', ['--encrypt', '', 'owner', '256', '--', plain, ownerOnly]);
    const r = await runPdfTool(dir, 'extract-pages', [ownerOnly], { range: '2' });
    assert.deepEqual(pageTexts(r.file!), ['Secret page 2']);
  });

  it("tools that work on a decrypted copy keep an owner-restricted PDF's encryption and permissions", async () => {
    // The qpdf page tools kept them; watermark, crop, grayscale… returned the file unrestricted.
    const restricted = path.join(dir, 'restricted.pdf');
    execFileSync('qpdf', ['--encrypt', '', 'boss', '256', '--print=none', '--extract=n', '--modify=none', '--', plain, restricted]);
    for (const [id, settings] of [
      ['watermark-pdf', { text: 'MARK' }],
      ['pdf-page-numbers', {}],
      ['crop-pdf', { margin: 5 }],
      ['pdf-metadata', { title: 'New title' }],
      ['nup-pdf', {}],
      ['booklet-pdf', {}],
      ['flatten-pdf', {}],
      ['redact-pdf', { terms: ['page 1'] }],
      ['grayscale-pdf', {}],
    ] as const) {
      const r = await runPdfTool(dir, id, [restricted], settings);
      const enc = execFileSync('qpdf', ['--show-encryption', r.file!]).toString();
      assert.match(enc, /R = 6/, id);
      assert.match(enc, /print high resolution: not allowed/, id);
      assert.match(enc, /extract for any purpose: not allowed/, id);
      // Same passwords: it opens without one, and 'boss' is its owner password.
      assert.match(
        execFileSync('qpdf', ['--password=boss', '--show-encryption', r.file!]).toString(),
        /Supplied password is owner password/,
        id,
      );
      assert.match(pageTexts(r.file!).join(' '), /Secret page/, id);
    }
  });
});

describe('repair-pdf, corrupt input, linearize-pdf', () => {
  it('a PDF without pages is refused with its own reason (pdf-empty), by qpdf and pdf-lib tools alike', async () => {
    // A page tree with no kids, written out by hand (pdf-lib's empty document reads as one page to qpdf).
    const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [] /Count 0 >>'];
    let body = '%PDF-1.7\n';
    const offsets = objects.map((o, i) => {
      const at = body.length;
      body += `${i + 1} 0 obj\n${o}\nendobj\n`;
      return at;
    });
    const xref = body.length;
    body += `xref\n0 3\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
    body += `trailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
    const empty = path.join(dir, 'empty.pdf');
    writeFileSync(empty, body, 'latin1');
    for (const id of ['rotate-pdf', 'watermark-pdf'] as const)
      await assert.rejects(
        runPdfTool(dir, id, [empty], id === 'watermark-pdf' ? { text: 'X' } : {}),
        (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && e.reason === 'pdf-empty' && /empty\.pdf has no pages/.test(e.message),
      );
  });

  it('repair-pdf rebuilds a broken cross-reference table', async () => {
    const good = await makeTextPdf(path.join(dir, 'good.pdf'), numbered(2, 'Fix me'), { objectStreams: false });
    const bytes = readFileSync(good);
    const at = bytes.lastIndexOf('startxref');
    const broken = path.join(dir, 'broken-xref.pdf');
    writeFileSync(broken, Buffer.concat([bytes.subarray(0, at), Buffer.from('startxref\n999999\n%%EOF\n')]));
    const r = await runPdfTool(dir, 'repair-pdf', [broken]);
    assert.equal(r.data!.method, 'qpdf');
    assert.equal(r.data!.repaired, true);
    const check = tryRun('qpdf', ['--check', r.file!]);
    assert.equal(check.code, 0, check.out);
    assert.deepEqual(pageTexts(r.file!), ['Fix me 1', 'Fix me 2']);
  });

  it('repair-pdf falls back to Ghostscript when qpdf cannot find a trailer (xref streams)', async () => {
    const good = await makeTextPdf(path.join(dir, 'good-os.pdf'), numbered(3, 'Rebuilt'), { objectStreams: true });
    const bytes = readFileSync(good);
    const at = bytes.lastIndexOf('startxref');
    const broken = path.join(dir, 'broken-os.pdf');
    writeFileSync(broken, Buffer.concat([bytes.subarray(0, at), Buffer.from('startxref\n999999\n%%EOF\n')]));
    await assert.rejects(
      runPdfTool(dir, 'extract-pages', [broken], { range: '1' }),
      (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && /repair-pdf/.test(e.message),
    );
    const r = await runPdfTool(dir, 'repair-pdf', [broken]);
    assert.equal(r.data!.method, 'ghostscript');
    assert.deepEqual(pageTexts(r.file!), ['Rebuilt 1', 'Rebuilt 2', 'Rebuilt 3']);
  });

  it('a truncated PDF fails cleanly with UNSUPPORTED_INPUT in every tool, quickly', async () => {
    const good = await makeTextPdf(path.join(dir, 'good2.pdf'), numbered(2));
    const cut = path.join(dir, 'truncated.pdf');
    writeFileSync(cut, readFileSync(good).subarray(0, 300));
    const t0 = Date.now();
    // The message names the file as the user knows it, never the path on disk.
    await assert.rejects(
      runPdfTool(dir, 'rotate-pdf', [cut], {}),
      (e: KilnError) =>
        e.code === 'UNSUPPORTED_INPUT' && /repair-pdf/.test(e.message) && /truncated\.pdf/.test(e.message) && !e.message.includes(dir),
    );
    await assert.rejects(
      runPdfTool(dir, 'repair-pdf', [cut], {}),
      (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && !e.message.includes(dir),
    );
    await assert.rejects(runPdfTool(dir, 'compress-pdf', [cut], {}), (e: KilnError) => e.code === 'UNSUPPORTED_INPUT');
    assert.ok(Date.now() - t0 < 20_000);
  });

  it('linearize-pdf output passes qpdf --check-linearization', async () => {
    const src = await makeTextPdf(path.join(dir, 'lin.pdf'), numbered(4));
    assert.match(tryRun('qpdf', ['--check-linearization', src]).out, /is not linearized/);
    const r = await runPdfTool(dir, 'linearize-pdf', [src]);
    const c = tryRun('qpdf', ['--check-linearization', r.file!]);
    assert.equal(c.code, 0, c.out);
    assert.match(c.out, /no linearization errors/);
    assert.equal(pageCount(r.file!), 4);
  });
});
