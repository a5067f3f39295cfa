import { copyFile, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { safeFileName, stem } from '../../../core/paths.js';
import { defineTool } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'bulk-rename',
  section: 'image',
  group: 'optimization',
  summary: 'Rename many files with a token pattern and return them as a ZIP.',
  description:
    'Tokens: {n} the sequence number (from startIndex, zero-padded to padding digits), {date} the capture date from EXIF (YYYY-MM-DD; the file date when it has none), ' +
    '{original} the original name without extension. The extension of each file is kept (from its bytes). Clashing names get " (2)", " (3)"….',
  input: { kind: 'files', accept: ['image/*'], min: 1, max: 1000 },
  settings: z.object({
    pattern: z.string().min(1).max(1000).default('image-{n}').describe('Name pattern; tokens {n}, {date}, {original}.'),
    startIndex: z.int().min(0).default(1).describe('First value of {n}.'),
    padding: z.int().min(0).max(10).default(0).describe('Zero-pad {n} to this many digits (0 = no padding).'),
  }),
  output: 'ZIP of the renamed files',
  examples: ['*.jpg --pattern "trip-{date}-{n}" --padding 3 -o renamed.zip'],
  async run(ctx, { files }, s) {
    const dir = path.join(ctx.workDir, 'renamed');
    await mkdir(dir, { recursive: true });
    const needsDate = s.pattern.includes('{date}');
    const outputs = [];
    const names: { from: string; to: string }[] = [];
    for (const [i, f] of files.entries()) {
      const n = String(s.startIndex + i).padStart(s.padding, '0');
      const date = needsDate ? await captureDate(f.path) : '';
      const base = s.pattern
        .replace(/\{n\}/g, n)
        .replace(/\{date\}/g, date)
        .replace(/\{original\}/g, stem(f.name));
      const ext = f.type?.ext ?? (path.extname(f.name).slice(1) || 'bin');
      const name = safeFileName(`${base}.${ext}`, `${n}.${ext}`);
      if (name === `.${ext}`) throw new KilnError('VALIDATION_ERROR', 'The pattern gives an empty file name.');
      // Each file is copied under a private name; the ZIP entry carries the new name.
      const p = path.join(dir, `${i}.${ext}`);
      await copyFile(f.path, p);
      outputs.push(outputFile(p, { name }));
      names.push({ from: f.name, to: name });
    }
    if (outputs.length === 1) {
      // runTool zips only several outputs; a rename of one file is still delivered as a ZIP.
      const { zipFiles } = await import('../../../core/zip.js');
      const zip = ctx.out('zip', '', 'renamed');
      await zipFiles(outputs, zip);
      return { outputs: [outputFile(zip, { contentType: 'application/zip' })], data: { files: names } };
    }
    return { outputs, data: { files: names } };
  },
});

async function captureDate(file: string): Promise<string> {
  try {
    const sharp = await getSharp();
    const meta = await sharp(file).metadata();
    if (meta.exif) {
      const exifReader = (await import('exif-reader')).default;
      const e = exifReader(meta.exif) as { Photo?: { DateTimeOriginal?: Date }; Image?: { DateTime?: Date } };
      const d = e.Photo?.DateTimeOriginal ?? e.Image?.DateTime;
      if (d instanceof Date && !Number.isNaN(d.getTime())) return d.toISOString().slice(0, 10);
    }
  } catch {
    // No readable EXIF: fall back to the file's own date.
  }
  return (await stat(file)).mtime.toISOString().slice(0, 10);
}
