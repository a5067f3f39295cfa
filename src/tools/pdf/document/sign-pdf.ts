import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { secret } from '../../../core/settings.js';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { getPdfLib, loadPdf, savePdf, visibleSize, visibleToUser } from '../../../engines/pdf-lib.js';
import { openInput } from '../../image/_shared/decode.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';
import { addSignaturePlaceholder, signedFieldNames } from '../_shared/signature-field.js';

/** PAdES-style detached CMS (what @signpdf/utils calls SUBFILTER_ETSI_CADES_DETACHED). */
const SUBFILTER = 'ETSI.CAdES.detached';

const fraction = z.number().min(0).max(1);
const placement = z.object({
  sig: z.int().min(0).max(99).default(0).describe('Signature index: 0 = sig0.'),
  page: z.int().min(0).describe('Zero-based page index.'),
  x: fraction.describe('Left edge, fraction of the page width (0 = left).'),
  y: fraction.describe('Top edge, fraction of the page height (0 = top).'),
  w: fraction.optional().describe('Width, fraction of the page width.'),
  h: fraction.optional().describe('Height, fraction of the page height.'),
  width: fraction.optional().describe('Alias of w.'),
  height: fraction.optional().describe('Alias of h.'),
});

export default defineTool({
  id: 'sign-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Stamp uploaded signature images onto PDF pages at given placements.',
  description:
    'placements is a JSON array of {sig, page, x, y, w, h}: sig picks sig0, sig1…; page is zero-based; x, y, w, h are fractions of the displayed page ' +
    'with the origin at the top-left. Each image is fitted into its box keeping its aspect ratio. With a PKCS#12 certificate (certificate, ' +
    'certificatePassword) the stamped PDF is also signed cryptographically: a CMS signature with the ETSI.CAdES.detached sub-filter over the whole file. ' +
    'A PDF that is already signed gets the stamps and the new signature as an incremental update, so the earlier signatures stay valid.',
  input: {
    kind: 'file',
    accept: PDF_ACCEPT,
    extra: [
      {
        field: 'sig',
        indexed: true,
        accept: ['image/*'],
        required: true,
        description: 'signature images sig0, sig1, … (PNG with transparency typical)',
      },
      {
        field: 'certificate',
        accept: ['.p12', '.pfx'],
        required: false,
        description: 'PKCS#12 certificate and key for a cryptographic signature',
      },
    ],
  },
  settings: z.object({
    placements: z
      .array(placement)
      .min(1)
      .max(100)
      .describe('JSON array of {sig, page, x, y, w, h} (fractions, top-left origin, zero-based page).'),
    certificatePassword: secret(z.string().max(256)).optional().describe('Password of the PKCS#12 certificate.'),
    reason: z.string().max(200).optional().describe('Reason recorded in the cryptographic signature.'),
  }),
  check: (s) => {
    for (const [i, p] of s.placements.entries()) {
      const w = p.w ?? p.width;
      const h = p.h ?? p.height;
      if (!w || !h) return `placements[${i}] needs w and h (fractions of the page, above 0).`;
      if (p.x + w > 1.0001 || p.y + h > 1.0001) return `placements[${i}] reaches outside the page (x + w and y + h must be at most 1).`;
    }
  },
  needs: { engines: ['qpdf'] },
  batch: false,
  output: 'PDF',
  examples: [
    `contract.pdf --sig sig.png --placements '[{"sig":0,"page":0,"x":0.6,"y":0.85,"w":0.3,"h":0.08}]' -o signed.pdf`,
    `contract.pdf --sig sig.png --certificate me.p12 --certificate-password pw --placements '[{"page":0,"x":0.1,"y":0.8,"w":0.3,"h":0.1}]' -o signed.pdf`,
  ],
  async run(ctx, { files, extra }, s) {
    const pdf = await openPdf(ctx, files[0]!, { decrypt: true });
    const sigs = extra.sig ?? [];
    // An unencrypted input is loaded for an incremental update: when it is already signed, the stamps and
    // the new signature are appended and the signed bytes stay as they were (a full rewrite broke every
    // earlier signature: a countersigned contract showed the first signature as 'Digest Mismatch').
    const incremental = pdf.path === files[0]!.path;
    const doc = await loadPdf(pdf.path, pdf.name, pdf.pages, { incremental });
    const signedFields = await signedFieldNames(doc);
    if (signedFields.length && !incremental)
      ctx.warn(`the ${signedFields.length} earlier signature(s) no longer verify: the encrypted PDF had to be decrypted and rewritten`);
    const pages = doc.getPages();
    for (const [i, p] of s.placements.entries()) {
      if (p.sig >= sigs.length)
        throw new KilnError(
          'VALIDATION_ERROR',
          `placements[${i}] uses sig${p.sig}, but ${sigs.length} signature image${sigs.length === 1 ? ' was' : 's were'} sent.`,
          { details: [{ path: `placements.${i}.sig`, message: 'no such signature' }] },
        );
      if (p.page >= pages.length)
        throw new KilnError(
          'VALIDATION_ERROR',
          `placements[${i}] is on page index ${p.page}, but the PDF has ${pages.length} page${pages.length === 1 ? '' : 's'} (indices 0-${pages.length - 1}).`,
          { details: [{ path: `placements.${i}.page`, message: 'out of range' }] },
        );
    }
    // Each image once: PNG and JPEG embed as they are, other formats go through sharp to PNG.
    const images = await Promise.all(
      sigs.map(async (f) => {
        if (f.type?.ext === 'jpg') return doc.embedJpg(await readFile(f.path));
        if (f.type?.ext === 'png') return doc.embedPng(await readFile(f.path));
        const img = await openInput(f, ctx.workDir);
        return doc.embedPng(await img.png().toBuffer());
      }),
    );
    for (const p of s.placements) {
      const page = pages[p.page]!;
      const img = images[p.sig]!;
      const { width: W, height: H } = visibleSize(page);
      const bw = (p.w ?? p.width)! * W;
      const bh = (p.h ?? p.height)! * H;
      const scale = Math.min(bw / img.width, bh / img.height);
      const dw = img.width * scale;
      const dh = img.height * scale;
      // Top-left fractions → visible bottom-left of the fitted, centred image.
      const vx = p.x * W + (bw - dw) / 2;
      const vy = H - p.y * H - bh + (bh - dh) / 2;
      const u = visibleToUser(page, vx, vy, 0);
      const { degrees } = await getPdfLib();
      page.drawImage(img, { x: u.x, y: u.y, width: dw, height: dh, rotate: degrees(u.angle) });
    }
    const out = ctx.out('pdf', '-signed');
    const cert = extra.certificate?.[0];
    const appendToSigned = incremental && signedFields.length > 0;
    const data = { stamps: s.placements.length, ...(signedFields.length ? { earlierSignatures: signedFields.length } : {}) };
    if (!cert) {
      if (appendToSigned) await writeFile(out, await doc.commit({ useObjectStreams: false }));
      else await savePdf(doc, out);
      return { outputs: [pdfOutput(out)], data: { ...data, cryptographic: false } };
    }
    ctx.progress(60, 'signing');
    const signer = await openP12(await readFile(cert.path), s.certificatePassword ?? '');
    await addSignaturePlaceholder(doc, {
      reason: s.reason ?? 'Signed with kiln',
      name: signer.name,
      subFilter: SUBFILTER,
      signatureLength: 8192,
      taken: signedFields,
    });
    const prepared = appendToSigned ? await doc.commit({ useObjectStreams: false }) : await doc.save({ useObjectStreams: false });
    await writeFile(out, await signBytes(Buffer.from(prepared), signer));
    return {
      outputs: [pdfOutput(out)],
      data: { ...data, cryptographic: true, subFilter: SUBFILTER, signer: signer.name },
    };
  },
});

/** The PKCS#12 file opened first, so a wrong password or a file that is not PKCS#12 gets a clear answer. */
async function openP12(p12: Buffer, passphrase: string): Promise<{ p12: Buffer; passphrase: string; name: string }> {
  const forgeMod = await import('node-forge');
  const forge = (forgeMod as unknown as { default: typeof import('node-forge') }).default ?? forgeMod;
  try {
    const asn1 = forge.asn1.fromDer(forge.util.createBuffer(p12.toString('binary')));
    const bag = forge.pkcs12.pkcs12FromAsn1(asn1, passphrase);
    const certs = bag.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? [];
    const keys = bag.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag] ?? [];
    if (!certs[0]?.cert || !keys[0]?.key) throw new Error('no certificate and key inside');
    return { p12, passphrase, name: String(certs[0].cert.subject.getField('CN')?.value ?? 'unknown') };
  } catch (e) {
    const msg = (e as Error).message ?? '';
    throw new KilnError(
      'VALIDATION_ERROR',
      /password|mac|decrypt/i.test(msg) ? 'The certificate password is wrong.' : `certificate is not a usable PKCS#12 file: ${msg}`,
      {
        details: [{ path: /password|mac|decrypt/i.test(msg) ? 'certificatePassword' : 'certificate', message: msg }],
      },
    );
  }
}

/** Fills the placeholder of a PDF laid out with addSignaturePlaceholder: ByteRange, then the CMS signature over it. */
async function signBytes(pdf: Buffer, signer: { p12: Buffer; passphrase: string }): Promise<Buffer> {
  const [{ P12Signer }, signpdfMod] = await Promise.all([import('@signpdf/signer-p12'), import('@signpdf/signpdf')]);
  // CommonJS through import(): the instance is exports.default, reached as default.default (or default).
  type Signer = { sign(b: Buffer, s: unknown): Promise<Buffer> };
  const m = signpdfMod as unknown as { default: Signer & { default?: Signer } };
  const signpdf = m.default.default ?? m.default;
  return signpdf.sign(pdf, new P12Signer(signer.p12, { passphrase: signer.passphrase }));
}
