/**
 * Signature fields of a PDF in @cantoo/pdf-lib: counting the signatures a document already carries, and
 * adding the placeholder @signpdf fills in (the /Sig dictionary with a ByteRange to patch and zeroed
 * Contents, its widget, the form's SigFlags). Done on the document kiln stamped, so a file that is already
 * signed can get the new signature as an incremental update that leaves the earlier bytes, and with them
 * the earlier signatures, intact.
 */
import { getPdfLib } from '../../../engines/pdf-lib.js';

type PDFDocument = import('@cantoo/pdf-lib').PDFDocument;
type PDFDict = import('@cantoo/pdf-lib').PDFDict;

/** @signpdf's placeholder for the three ByteRange numbers it writes once the file is laid out. */
const BYTE_RANGE_PLACEHOLDER = '**********';

/** Fully qualified names of the form's fields whose value is a signature (a /Sig dictionary). */
export async function signedFieldNames(doc: PDFDocument): Promise<string[]> {
  const { PDFArray, PDFDict, PDFName, PDFString, PDFHexString } = await getPdfLib();
  const form = doc.catalog.lookupMaybe(PDFName.of('AcroForm'), PDFDict);
  const fields = form?.lookupMaybe(PDFName.of('Fields'), PDFArray);
  const names: string[] = [];
  const seen = new Set<PDFDict>();
  const walk = (arr: import('@cantoo/pdf-lib').PDFArray, prefix: string, depth: number) => {
    for (let i = 0; i < arr.size() && depth < 32; i++) {
      const f = arr.lookupMaybe(i, PDFDict);
      if (!f || seen.has(f)) continue; // a field tree that loops back on itself
      seen.add(f);
      const t = f.lookupMaybe(PDFName.of('T'), PDFString, PDFHexString)?.decodeText();
      const name = t === undefined ? prefix : prefix ? `${prefix}.${t}` : t;
      const kids = f.lookupMaybe(PDFName.of('Kids'), PDFArray);
      if (f.lookupMaybe(PDFName.of('FT'), PDFName)?.asString() === '/Sig' && f.lookupMaybe(PDFName.of('V'), PDFDict)) names.push(name);
      else if (kids) walk(kids, name, depth + 1);
    }
  };
  if (fields) walk(fields, '', 0);
  return names;
}

/**
 * Adds an invisible signature field on the first page whose value is a placeholder for a detached CMS
 * signature of up to `signatureLength` bytes; `taken` are field names in use (the new one must differ:
 * two fields named Signature1 are one field to a viewer).
 */
export async function addSignaturePlaceholder(
  doc: PDFDocument,
  o: { reason: string; name: string; subFilter: string; signatureLength: number; taken: string[] },
): Promise<string> {
  const { PDFArray, PDFDict, PDFHexString, PDFInvalidObject, PDFName, PDFNumber, PDFString } = await getPdfLib();
  const ctx = doc.context;
  const byteRange = PDFArray.withContext(ctx);
  byteRange.push(PDFNumber.of(0));
  for (let i = 0; i < 3; i++) byteRange.push(PDFName.of(BYTE_RANGE_PLACEHOLDER));
  const sig = ctx.obj({
    Type: 'Sig',
    Filter: 'Adobe.PPKLite',
    SubFilter: o.subFilter,
    ByteRange: byteRange,
    Contents: PDFHexString.of('00'.repeat(o.signatureLength)),
    Reason: PDFString.of(o.reason),
    M: PDFString.fromDate(new Date()),
    Name: PDFString.of(o.name),
    Prop_Build: { Filter: { Name: 'Adobe.PPKLite' } },
  });
  // Written as raw bytes so it is never packed into a compressed object stream: @signpdf patches
  // ByteRange and Contents in the file's bytes.
  const bytes = new Uint8Array(sig.sizeInBytes());
  sig.copyBytesInto(bytes, 0);
  const sigRef = ctx.register(PDFInvalidObject.of(bytes));
  let n = 1;
  while (o.taken.includes(`Signature${n}`)) n++;
  const fieldName = `Signature${n}`;
  const page = doc.getPages()[0]!;
  const widget = ctx.register(
    ctx.obj({
      Type: 'Annot',
      Subtype: 'Widget',
      FT: 'Sig',
      Rect: [0, 0, 0, 0],
      V: sigRef,
      T: PDFString.of(fieldName),
      F: 4, // print
      P: page.ref,
      // An (empty) appearance, which PDF/A requires of every widget; Resources avoids an Acrobat quirk.
      AP: { N: ctx.register(ctx.formXObject([], { BBox: [0, 0, 0, 0], Resources: {} })) },
    }),
  );
  const annots = page.node.lookupMaybe(PDFName.of('Annots'), PDFArray);
  if (annots) annots.push(widget);
  else page.node.set(PDFName.of('Annots'), ctx.obj([widget]));
  let form = doc.catalog.lookupMaybe(PDFName.of('AcroForm'), PDFDict);
  if (!form) {
    form = ctx.obj({ Fields: [] });
    doc.catalog.set(PDFName.of('AcroForm'), ctx.register(form));
  }
  const flags = form.lookupMaybe(PDFName.of('SigFlags'), PDFNumber)?.asNumber() ?? 0;
  // 1: the document has signatures; 2: append only (save changes as incremental updates).
  form.set(PDFName.of('SigFlags'), PDFNumber.of(flags | 3));
  const fields = form.lookupMaybe(PDFName.of('Fields'), PDFArray);
  if (fields) fields.push(widget);
  else form.set(PDFName.of('Fields'), ctx.obj([widget]));
  return fieldName;
}
