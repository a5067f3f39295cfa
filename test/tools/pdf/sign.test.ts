import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import forge from 'node-forge';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { makeTextPdf, pageTexts, runPdfTool, tryRun } from './pdf-helpers.js';

const dir = tempDir('kiln-pdf-sign-');
let doc: string;
let blue: string;
let green: string;

/** A self-signed RSA certificate and key as PKCS#12 (3DES, as most tools write it). */
function makeP12(file: string, password: string): string {
  // Node's native key generation: forge's pure-JS RSA takes seconds.
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keys = {
    privateKey: forge.pki.privateKeyFromPem(pair.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()),
    publicKey: forge.pki.publicKeyFromPem(pair.publicKey.export({ type: 'spki', format: 'pem' }).toString()),
  };
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 86_400_000);
  const attrs = [
    { name: 'commonName', value: 'Kiln Test Signer' },
    { name: 'countryName', value: 'DE' },
  ];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  const p12 = forge.pkcs12.toPkcs12Asn1(keys.privateKey, [cert], password, { algorithm: '3des' });
  writeFileSync(file, Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary'));
  return file;
}

/** Mean colour of a region of a page rendered at 72 dpi (x, y, w, h in points from the top-left). */
async function regionColour(file: string, page: number, x: number, y: number, w: number, h: number): Promise<number[]> {
  const base = path.join(dir, `r-${Math.random().toString(36).slice(2)}`);
  execFileSync('pdftoppm', ['-r', '72', '-f', String(page), '-l', String(page), '-png', '-singlefile', file, base]);
  // stats() reads the input, not the pipeline: cut the region out first.
  const region = await sharp(`${base}.png`).extract({ left: x, top: y, width: w, height: h }).removeAlpha().png().toBuffer();
  const stats = await sharp(region).stats();
  return stats.channels.map((c) => Math.round(c.mean));
}

describe('sign-pdf', () => {
  before(async () => {
    doc = await makeTextPdf(path.join(dir, 'contract.pdf'), ['Contract page one', 'Contract page two'], { size: [400, 400] });
    blue = path.join(dir, 'sig-blue.png');
    await sharp({ create: { width: 200, height: 100, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 1 } } })
      .png()
      .toFile(blue);
    green = path.join(dir, 'sig-green.webp');
    await sharp({ create: { width: 100, height: 100, channels: 3, background: { r: 0, g: 200, b: 0 } } })
      .webp({ lossless: true })
      .toFile(green);
  });

  it('stamps each signature image at its placement (fractions, top-left origin, zero-based page)', async () => {
    const placements = [
      { sig: 0, page: 0, x: 0.5, y: 0.75, w: 0.5, h: 0.25 },
      { sig: 1, page: 1, x: 0, y: 0, width: 0.25, height: 0.25 },
    ];
    const r = await runPdfTool(dir, 'sign-pdf', [doc], { placements }, { sig: [blue, green] });
    assert.equal(r.data!.stamps, 2);
    // Page 1: blue box in the bottom-right quarter (200×100 pt at x 200, y 300 from the top), white elsewhere.
    const [rb, gb, bb] = await regionColour(r.file!, 1, 210, 310, 180, 80);
    assert.ok(rb! < 30 && gb! < 30 && bb! > 220, `blue region ${[rb, gb, bb]}`);
    const [rw, , bw] = await regionColour(r.file!, 1, 210, 150, 180, 80);
    assert.ok(rw! > 240 && bw! > 240);
    // Page 2: green square top-left.
    const [r2, g2, b2] = await regionColour(r.file!, 2, 10, 10, 80, 80);
    assert.ok(r2! < 30 && g2! > 170 && b2! < 30, `green region ${[r2, g2, b2]}`);
    assert.deepEqual(pageTexts(r.file!), ['Contract page one', 'Contract page two']);
  });

  it('rejects placements that point at a missing signature or page', async () => {
    await assert.rejects(
      runPdfTool(dir, 'sign-pdf', [doc], { placements: [{ sig: 1, page: 0, x: 0, y: 0, w: 0.1, h: 0.1 }] }, { sig: [blue] }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /sig1/.test(e.message),
    );
    await assert.rejects(
      runPdfTool(dir, 'sign-pdf', [doc], { placements: [{ sig: 0, page: 2, x: 0, y: 0, w: 0.1, h: 0.1 }] }, { sig: [blue] }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /2 pages/.test(e.message),
    );
    await assert.rejects(
      runPdfTool(dir, 'sign-pdf', [doc], { placements: [{ sig: 0, page: 0, x: 0.9, y: 0, w: 0.2, h: 0.1 }] }, { sig: [blue] }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
    await assert.rejects(
      runPdfTool(dir, 'sign-pdf', [doc], { placements: [{ sig: 0, page: 0, x: 0, y: 0, w: 0.2, h: 0.1 }] }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
  });

  it('adds a cryptographic CAdES signature that pdfsig validates', async () => {
    const p12 = makeP12(path.join(dir, 'signer.p12'), 'cert-pw');
    const placements = [{ sig: 0, page: 0, x: 0.1, y: 0.8, w: 0.3, h: 0.1 }];
    const r = await runPdfTool(dir, 'sign-pdf', [doc], { placements, certificatePassword: 'cert-pw' }, { sig: [blue], certificate: [p12] });
    assert.equal(r.data!.cryptographic, true);
    assert.equal(r.data!.signer, 'Kiln Test Signer');
    const v = tryRun('pdfsig', [r.file!]);
    assert.match(v.out, /Signer Certificate Common Name: Kiln Test Signer/);
    assert.match(v.out, /Signature Type: ETSI\.CAdES\.detached/);
    assert.match(v.out, /Signature Validation: Signature is Valid/);
    assert.match(v.out, /Total document signed/);
    // Changing one byte inside the signed range (the header comment, covered by ByteRange [0 …]) breaks it.
    const bytes = (await import('node:fs')).readFileSync(r.file!);
    bytes[12] = bytes[12]! ^ 1;
    const tampered = path.join(dir, 'tampered.pdf');
    writeFileSync(tampered, bytes);
    assert.doesNotMatch(tryRun('pdfsig', [tampered]).out, /Signature is Valid/);

    await assert.rejects(
      runPdfTool(dir, 'sign-pdf', [doc], { placements, certificatePassword: 'wrong' }, { sig: [blue], certificate: [p12] }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /password/.test(e.message),
    );
  });

  it('countersigning or stamping a signed PDF keeps the earlier signatures valid (an incremental update)', async () => {
    // A full rewrite changed the bytes the first signature covers: pdfsig said 'Digest Mismatch' for it,
    // and both fields were named Signature1 (one field to a viewer).
    const alice = makeP12(path.join(dir, 'alice.p12'), 'a-pw');
    const bob = makeP12(path.join(dir, 'bob.p12'), 'b-pw');
    const first = await runPdfTool(
      dir,
      'sign-pdf',
      [doc],
      { placements: [{ page: 0, x: 0.1, y: 0.8, w: 0.3, h: 0.1 }], certificatePassword: 'a-pw' },
      { sig: [blue], certificate: [alice] },
    );
    const second = await runPdfTool(
      dir,
      'sign-pdf',
      [first.file!],
      { placements: [{ page: 0, x: 0.6, y: 0.8, w: 0.3, h: 0.1 }], certificatePassword: 'b-pw' },
      { sig: [green], certificate: [bob] },
    );
    assert.equal(second.data!.earlierSignatures, 1);
    // The first file's bytes are the start of the second: nothing it signed was touched.
    const a = readFileSync(first.file!);
    assert.ok(readFileSync(second.file!).subarray(0, a.length).equals(a));
    const stamped = await runPdfTool(
      dir,
      'sign-pdf',
      [second.file!],
      { placements: [{ page: 1, x: 0.1, y: 0.1, w: 0.3, h: 0.1 }] },
      { sig: [blue] },
    );
    for (const [file, signatures] of [
      [second.file!, 2],
      [stamped.file!, 2],
    ] as const) {
      const out = tryRun('pdfsig', [file]).out;
      assert.equal(out.match(/Signature Validation: Signature is Valid/g)?.length, signatures, out);
      assert.match(out, /Signature Field Name: Signature1[\s\S]*Signature Field Name: Signature2/);
      assert.equal(tryRun('qpdf', ['--check', file]).code, 0);
    }
    assert.match(tryRun('pdfsig', [second.file!]).out, /Common Name: Kiln Test Signer[\s\S]*Total document signed/);
    assert.equal(pageTexts(stamped.file!)[0], 'Contract page one');
    // Both stamps are on page one, the third on page two (within a few levels: edges are anti-aliased).
    const near = (got: number[], want: number[]) =>
      assert.ok(
        got.every((v, i) => Math.abs(v - want[i]!) <= 6),
        `${got} vs ${want}`,
      );
    near(await regionColour(second.file!, 1, 60, 330, 40, 20), [0, 0, 255]);
    near(await regionColour(second.file!, 1, 285, 330, 30, 20), [0, 200, 0]); // a square fitted in the middle of its box
    near(await regionColour(stamped.file!, 2, 60, 50, 40, 20), [0, 0, 255]);
  });
});
