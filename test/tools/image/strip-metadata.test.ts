import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import exifReader from 'exif-reader';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { runTool, inputFile } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { kiln } from '../../helpers/cli.js';

const dir = tempDir();

const EXIF = {
  IFD0: { Make: 'KilnCam', Model: 'T1', Copyright: 'Someone' },
  IFD2: { DateTimeOriginal: '2024:05:06 07:08:09' },
  IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 24/1', GPSLongitudeRef: 'E', GPSLongitude: '2/1 21/1 3/1' },
};

async function tagged(name: string, opts: { orientation?: number } = {}): Promise<string> {
  const p = path.join(dir, name);
  let img = sharp(await makeImage(dir, `src-${name}.png`, 120, 60))
    .withExif(EXIF)
    .withXmp('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></x:xmpmeta>');
  if (opts.orientation) img = img.withMetadata({ orientation: opts.orientation });
  await img.toFile(p);
  return p;
}

/** The metadata tags ExifTool finds (EXIF incl. GPS, XMP, IPTC, ICC, Photoshop, maker notes). */
function exiftoolTags(p: string): Record<string, unknown> {
  const j = JSON.parse(execFileSync('exiftool', ['-j', '-G', p]).toString())[0] as Record<string, unknown>;
  return Object.fromEntries(Object.entries(j).filter(([k]) => /^(EXIF|XMP|IPTC|ICC_Profile|Photoshop|MakerNotes|GPS)[:-]/.test(k)));
}

async function run(file: string) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(
      getTool('strip-metadata'),
      { files: [await inputFile(file)], extra: {} },
      {},
      { workDir: ws.dir, dataDir: dir },
    );
    const p = path.join(dir, `stripped-${path.basename(file)}`);
    execFileSync('cp', [out.output!.path, p]);
    return { out, path: p, meta: await sharp(p).metadata() };
  } finally {
    await ws.dispose();
  }
}

describe('strip-metadata', () => {
  it('removes EXIF with GPS and XMP from a JPEG without touching the pixels', async () => {
    const src = await tagged('a.jpg');
    const before = await sharp(src).metadata();
    assert.equal(exifReader(before.exif!).GPSInfo?.GPSLatitudeRef, 'N');
    assert.ok(Object.keys(exiftoolTags(src)).some((k) => k.startsWith('EXIF:GPS')));
    const r = await run(src);
    assert.equal(r.out.data!.method, 'exiftool');
    assert.equal(r.meta.exif, undefined);
    assert.equal(r.meta.xmp, undefined);
    assert.deepEqual(exiftoolTags(r.path), {});
    assert.deepEqual([r.meta.width, r.meta.height], [120, 60]);
    const a = await sharp(src).raw().toBuffer();
    const b = await sharp(r.path).raw().toBuffer();
    assert.ok(a.equals(b), 'pixels are unchanged');
  });
  it('strips PNG and WebP too', async () => {
    for (const name of ['b.png', 'b.webp']) {
      const r = await run(await tagged(name));
      assert.equal(r.meta.exif, undefined, name);
      assert.deepEqual(exiftoolTags(r.path), {}, name);
    }
  });
  it("strips a TIFF's own IFD0 tags too (camera, author, software, host), not only GPS, XMP and IPTC", async () => {
    // ExifTool's -all= keeps a TIFF's IFD0, where the image itself lives: Artist, Make, Copyright… stayed.
    const src = path.join(dir, 'd.tiff');
    await sharp(await makeImage(dir, 'src-d.png', 40, 30))
      .tiff()
      .toFile(src);
    const secrets = ['Artist', 'Make', 'Model', 'Software', 'ImageDescription', 'Copyright', 'HostComputer', 'DocumentName', 'PageName'];
    execFileSync('exiftool', ['-q', '-overwrite_original', ...secrets.map((t) => `-${t}=Secret ${t}`), '-GPSLatitude=48.85', src]);
    const before = JSON.stringify(JSON.parse(execFileSync('exiftool', ['-j', src]).toString()));
    for (const t of secrets) assert.ok(before.includes(`Secret ${t}`), t);
    const r = await run(src);
    assert.equal(r.out.data!.method, 'exiftool');
    const after = JSON.parse(execFileSync('exiftool', ['-j', r.path]).toString())[0] as Record<string, unknown>;
    assert.deepEqual(
      Object.keys(after).filter((k) => secrets.includes(k) || k.startsWith('GPS')),
      [],
    );
    assert.ok((await sharp(src).raw().toBuffer()).equals(await sharp(r.path).raw().toBuffer()), 'pixels are unchanged');
  });
  it('applies an EXIF rotation to the pixels before dropping it', async () => {
    const r = await run(await tagged('c.jpg', { orientation: 6 }));
    assert.equal(r.out.data!.method, 'reencode');
    assert.equal(r.meta.exif, undefined);
    assert.equal(r.meta.orientation, undefined);
    assert.deepEqual([r.meta.width, r.meta.height], [60, 120]);
  });
  it('runs from the CLI', async () => {
    const src = await tagged('cli.jpg');
    const out = path.join(dir, 'cli-clean.jpg');
    const r = await kiln(['strip-metadata', src, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(exiftoolTags(out), {});
  });
});
