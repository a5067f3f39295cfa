/**
 * meme-generator's custom-image mode beside template mode (issue #15 item 5): the picture is the CLI's
 * positional input (or --file), the multipart field `file` over HTTP, and `--server` sends it there.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, startServer, type TestServer } from '../helpers/server.js';

const BOXES = JSON.stringify([
  { id: 'top', text: 'hello' },
  { id: 'bottom', text: 'world' },
]);

describe('meme-generator with an uploaded picture', () => {
  const dir = tempDir('kiln-meme-');
  let s: TestServer;
  let key: string;
  let cat: string;
  before(async () => {
    cat = await makeImage(dir, 'cat.jpg', 120, 90);
    s = await startServer();
    key = (await api(s, s.token, 'POST', '/api/v1/api-keys', { name: 'cli' })).body.key;
  });
  after(() => s.close());

  /** The picture is kept (its size, its red left half) and text was drawn on it (white pixels appear). */
  async function assertMeme(file: string | Buffer) {
    const { data, info } = await sharp(file).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height], [120, 90]);
    let white = 0;
    for (let i = 0; i < data.length; i += info.channels) if (data[i]! > 230 && data[i + 1]! > 230 && data[i + 2]! > 230) white++;
    assert.ok(white > 20, `text drawn: ${white} white pixels`);
    const mid = (45 * 120 + 10) * info.channels;
    assert.ok(data[mid]! > 200 && data[mid + 2]! < 60, 'the picture is underneath');
  }

  it('CLI: the positional input is the picture', async () => {
    const out = path.join(dir, 'meme.png');
    const r = await kiln(['meme-generator', cat, '--text-boxes', BOXES, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    await assertMeme(out);
  });

  it('HTTP: multipart with the picture in "file"', async () => {
    const r = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/meme-generator',
      await form({ file: await filePart(cat), settings: JSON.stringify({ textBoxes: JSON.parse(BOXES) }) }),
    );
    assert.equal(r.status, 200, r.text);
    const png = Buffer.from(
      await (await fetch(`${s.url}${r.body.downloadUrl}`, { headers: { authorization: `Bearer ${s.token}` } })).arrayBuffer(),
    );
    await assertMeme(png);
  });

  it('CLI with --server sends the picture', async () => {
    const out = path.join(dir, 'remote-meme.png');
    const r = await kiln(['meme-generator', cat, '--text-boxes', BOXES, '-o', out, '--server', s.url], {
      env: { KILN_API_KEY: key, KILN_SERVER: '' },
    });
    assert.equal(r.code, 0, r.stderr);
    await assertMeme(out);
  });
});
