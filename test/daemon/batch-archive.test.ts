/**
 * The batch archive's own rules, without a daemon: the entry names of the outputs (unique, also on a
 * case-insensitive disk, never the manifest's) and the manifest beside them.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { describe, it } from 'node:test';
import { batchArchive, batchArchiveName, type ManifestItem } from '../../daemon/jobs/batch-archive.js';
import { tempDir } from '../helpers/fixtures.js';
import { readZip } from '../helpers/zip.js';

const dir = tempDir('kiln-batch-archive-');

function item(input: string, output: string, body: string): ManifestItem {
  const file = path.join(dir, `${body}.bin`);
  writeFileSync(file, body);
  return { input, output, path: file, size: body.length };
}

describe('batch archive', () => {
  it('names outputs apart when they differ only in case: one file once unzipped on macOS or Windows', async () => {
    const items = [
      item('Photo.png', 'Photo.jpg', 'first'),
      item('photo.png', 'photo.jpg', 'second'),
      item('MANIFEST.png', 'MANIFEST.json', 'third'),
    ];
    const entries = await readZip(await buffer(batchArchive('job', 'png-to-jpg', items).outputStream));
    const names = [...entries.keys()];
    assert.deepEqual(names, ['Photo.jpg', 'photo (2).jpg', 'MANIFEST (2).json', 'manifest.json']);
    assert.equal(new Set(names.map((n) => n.toLowerCase())).size, names.length);
    // Each entry holds its own input's output, and the manifest says which.
    assert.deepEqual(
      names.slice(0, 3).map((n) => entries.get(n)!.toString()),
      ['first', 'second', 'third'],
    );
    const manifest = JSON.parse(entries.get('manifest.json')!.toString());
    assert.deepEqual(
      manifest.items.map((m: ManifestItem) => m.output),
      names.slice(0, 3),
    );
  });

  it('is named so that any system can save it: no colon from a pipeline target', () => {
    assert.equal(batchArchiveName('png-to-jpg'), 'png-to-jpg-batch.zip');
    // It was pipeline:web.thumbs-batch.zip.
    assert.equal(batchArchiveName('pipeline:web.thumbs'), 'pipeline-web.thumbs-batch.zip');
    // An unnamed pipeline is named pipeline: its archive was pipeline-pipeline-batch.zip.
    assert.equal(batchArchiveName('pipeline:pipeline'), 'pipeline-batch.zip');
  });
});
