/**
 * A PDF's XMP metadata packet (the catalog's /Metadata stream) kept in step with its information
 * dictionary. PDF 2.0 deprecates the dictionary for XMP, and viewers that find both show the XMP title
 * (Acrobat among them when the packet is newer): a title set in the dictionary alone still showed the
 * old one there. ExifTool rewrites the packet (every other property kept: PDF/A identification,
 * rights…) as an incremental update, which leaves the old packet readable in the file; qpdf then writes
 * the file anew with only what the trailer reaches, so the old values are gone.
 */
import { copyFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { exec } from '../core/process.js';
import { qpdf } from './qpdf.js';
import { requireEngine } from './registry.js';

/** Information dictionary fields and the XMP properties they correspond to (ISO 16684 / PDF 32000 14.3.2). */
const XMP_TAG = {
  title: 'XMP-dc:Title',
  author: 'XMP-dc:Creator',
  subject: 'XMP-dc:Description',
  keywords: 'XMP-pdf:Keywords',
  creator: 'XMP-xmp:CreatorTool',
} as const;

export type XmpField = keyof typeof XMP_TAG;

/** ExifTool's date form, in UTC. */
function exifDate(d: Date): string {
  return d.toISOString().replace(/^(\d+)-(\d+)-(\d+)T(\d+:\d+:\d+).*$/, '$1:$2:$3 $4Z');
}

/**
 * Writes `input` to `out` with the XMP properties of `fields` set (an empty string removes one) and its
 * modification dates set to `modified` (left as they are without it). For a PDF that has an XMP packet.
 */
export async function syncPdfXmp(
  input: string,
  out: string,
  fields: Partial<Record<XmpField, string>>,
  modified: Date | undefined,
  o: { workDir: string; signal?: AbortSignal },
): Promise<void> {
  const exiftool = await requireEngine('exiftool');
  const tmp = path.join(o.workDir, `xmp-${process.hrtime.bigint()}.pdf`);
  await copyFile(input, tmp);
  try {
    const when = modified && exifDate(modified);
    // `-TAG=value` as one argument: a value holding "<" or ">" is never read as a copy from another tag.
    const sets = Object.entries(fields).map(([k, v]) => `-${XMP_TAG[k as XmpField]}=${v}`);
    await exec(
      exiftool,
      [
        '-q',
        '-q',
        '-m',
        '-overwrite_original',
        '-charset',
        'utf8',
        ...sets,
        ...(when ? [`-XMP-xmp:ModifyDate=${when}`, `-XMP-xmp:MetadataDate=${when}`] : []),
        '--',
        tmp,
      ],
      { signal: o.signal, failCode: 'UNSUPPORTED_INPUT', timeoutMs: 120_000 },
    );
    await qpdf([tmp, out], { signal: o.signal });
  } finally {
    await rm(tmp, { force: true });
  }
}
