/**
 * The OCR runtime from the command line: `kiln features import --index --archive` into the data dir,
 * `kiln features list` showing the generation, `kiln ocr` at balanced on it, Korean with fast refused
 * with its exit code, and `kiln features remove ocr`.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { tempDir } from '../helpers/fixtures.js';
import { kiln } from '../helpers/cli.js';
import { renderText, testKey, testRelease } from '../helpers/ocr.js';

describe('kiln features … ocr and kiln ocr', { timeout: 300_000 }, () => {
  const dir = tempDir('kiln-ocr-cli-');
  const env: NodeJS.ProcessEnv = { KILN_DATA_DIR: path.join(dir, 'data') };
  let image: string;

  before(async () => {
    const pub = path.join(dir, 'key.pub.pem');
    await writeFile(pub, testKey().publicKey.export({ format: 'pem', type: 'spki' }).toString());
    env.KILN_OCR_TRUSTED_KEYS = pub;
    image = await renderText(path.join(dir, 'line.png'), 700, 100, [{ text: 'Glaze and fire the pots', x: 20, y: 60, size: 34 }]);
  });

  it('imports a release, lists it, reads with it and removes it', async () => {
    const rel = await testRelease();
    const imp = await kiln(['features', 'import', '--index', rel.indexFile, '--archive', rel.archiveFile, '--local', '--json'], { env });
    assert.equal(imp.code, 0, imp.stderr);
    const status = JSON.parse(imp.stdout) as { state: string; generation: { id: string } };
    assert.equal(status.state, 'installed');
    const list = await kiln(['features', 'list', '--local', '--json'], { env });
    const ocr = list.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; state: string; generation?: { id: string } })
      .find((f) => f.id === 'ocr');
    assert.equal(ocr?.generation?.id, status.generation.id);
    const out = path.join(dir, 'out.json');
    const run = await kiln(['ocr', image, '--quality', 'balanced', '-o', out], { env });
    assert.equal(run.code, 0, run.stderr);
    const { readFile } = await import('node:fs/promises');
    const data = JSON.parse(await readFile(out, 'utf8')) as { text: string; provenance: { runtimeGeneration: string } };
    assert.equal(data.text, 'Glaze and fire the pots');
    assert.equal(data.provenance.runtimeGeneration, status.generation.id);
    const ko = await kiln(['ocr', image, '--quality', 'fast', '--language', 'ko', '-o', path.join(dir, 'ko.json')], { env });
    assert.notEqual(ko.code, 0);
    assert.match(ko.stderr, /Korean is not supported by quality 'fast'/);
    const rm = await kiln(['features', 'remove', 'ocr', '--local'], { env });
    assert.equal(rm.code, 0, rm.stderr);
    const after = await kiln(['ocr', image, '--quality', 'balanced', '-o', path.join(dir, 'again.json')], { env });
    assert.notEqual(after.code, 0);
    assert.match(after.stderr, /exact OCR runtime, which is not installed/);
  });
});
