/**
 * Unpacks the ZIP of a multi-output tool (pdf-to-image, split, video-to-frames…) so the CLI can write its
 * files one by one. The ZIP may come from a server: entry names are reduced to base names, repeated
 * names are numbered, and the entry count and inflated size are capped (src/core/zip-guard.ts limits).
 */
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import { KilnError } from '../core/errors.js';
import { DEFAULT_ZIP_LIMITS } from '../core/zip-guard.js';
import { dedupe, plainName } from './output-naming.js';
import { makeDir } from '../core/make-dir.js';

export interface UnzippedFile {
  path: string;
  name: string;
}

export async function unzipFiles(zipPath: string, intoDir: string): Promise<UnzippedFile[]> {
  await makeDir(intoDir);
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(zipPath, { lazyEntries: true }, (err, z) => (err || !z ? reject(err ?? new Error('no zip')) : resolve(z))),
  );
  const out: UnzippedFile[] = [];
  const used = new Set<string>();
  let total = 0;
  const tooBig = () =>
    new KilnError(
      'LIMIT_EXCEEDED',
      `The output ZIP is larger than ${DEFAULT_ZIP_LIMITS.maxTotalBytes} bytes unpacked; keep it whole with --zip.`,
    );
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', reject);
      zip.on('end', () => resolve());
      zip.on('entry', (e: yauzl.Entry) => {
        if (e.fileName.endsWith('/')) return zip.readEntry();
        if (out.length >= DEFAULT_ZIP_LIMITS.maxEntries)
          return reject(new KilnError('LIMIT_EXCEEDED', 'The output ZIP has too many files.'));
        let name = plainName(e.fileName, 'file');
        if (used.has(name)) name = dedupe(name, used);
        used.add(name);
        const dest = path.join(intoDir, name);
        zip.openReadStream(e, (err, rs) => {
          if (err || !rs) return reject(err ?? new Error('unreadable entry'));
          const count = new Transform({
            transform(chunk: Buffer, _enc, cb) {
              total += chunk.length;
              cb(total > DEFAULT_ZIP_LIMITS.maxTotalBytes ? tooBig() : null, chunk);
            },
          });
          pipeline(rs, count, createWriteStream(dest)).then(() => {
            out.push({ path: dest, name });
            zip.readEntry();
          }, reject);
        });
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  return out;
}
