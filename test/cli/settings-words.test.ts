/**
 * Settings in the user's words (issue #15 items 9 and 10): problems name the flag on the CLI and the
 * setting over HTTP, never the validation library's wording; colour names and HH:MM:SS times are
 * accepted; a mode's own setting implies the mode.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kiln } from '../helpers/cli.js';
import { makePhoto, makeImage, tempDir } from '../helpers/fixtures.js';
import { duration, frameRgb, makeAudio, makeVideo } from '../helpers/media.js';
import { api, filePart, form, startServer, type TestServer } from '../helpers/server.js';

describe('validation problems in the user words', () => {
  const dir = tempDir('kiln-words-');
  let s: TestServer;
  let key: string;
  let photo: string;
  before(async () => {
    photo = await makeImage(dir, 'photo.jpg', 40, 30);
    s = await startServer();
    key = (await api(s, s.token, 'POST', '/api/v1/api-keys', { name: 'cli' })).body.key;
  });
  after(() => s.close());

  it('CLI: "--left is required", not "expected number, received undefined"', async () => {
    const r = await kiln(['crop', photo, '--top', '1']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--left is required/);
    assert.doesNotMatch(r.stderr, /Invalid input|received/);
    const range = await kiln(['resize', photo, '--width', '0', '--json']);
    assert.equal(range.code, 2);
    assert.match((JSON.parse(range.stdout) as { error: { message: string } }).error.message, /--width must be at least 1/);
    const rule = await kiln(['split-pdf', 'doc.pdf', '--mode', 'every']);
    assert.equal(rule.code, 2);
    assert.match(rule.stderr, /needs --every-n/);
  });

  it('HTTP: the same problem names the setting, with the same code and status', async () => {
    const r = await api(s, s.token, 'POST', '/api/v1/tools/image/crop', await form({ file: await filePart(photo), settings: '{"top":1}' }));
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'VALIDATION_ERROR');
    assert.match(r.body.error.message, /left is required/);
    assert.doesNotMatch(r.body.error.message, /--left|Invalid input/);
    assert.deepEqual(
      (r.body.error.details as { path: string; message: string }[]).find((d) => d.path === 'left'),
      { path: 'left', message: 'is required' },
    );
  });

  it('CLI with --server: the server error is worded with the flags too', async () => {
    const r = await kiln(['crop', photo, '--top', '1', '--server', s.url], { env: { KILN_API_KEY: key, KILN_SERVER: '' } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--left is required/);
  });

  it('a CSS colour name where a video tool wanted #rrggbb: white bars', async () => {
    const clip = makeVideo(dir, 'clip.mp4', { width: 64, height: 32, durationS: 1 });
    const out = path.join(dir, 'square.mp4');
    const r = await kiln(['aspect-pad', clip, '--target', '1:1', '--color', 'white', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const f = frameRgb(out, 0.2);
    assert.ok(f.data[0]! > 240 && f.data[1]! > 240 && f.data[2]! > 240, `top-left pixel is white: ${[...f.data.subarray(0, 3)]}`);
  });

  it('HH:MM:SS.mmm and MM:SS times for seconds settings', async () => {
    const wav = makeAudio(dir, 'tone.wav', { durationS: 2 });
    const out = path.join(dir, 'cut.wav');
    const r = await kiln(['trim-audio', wav, '--start-s', '00:00:00.500', '--end-s', '0:01.5', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(Math.abs(duration(out) - 1) < 0.05, `duration ${duration(out)}`);
    const bad = await kiln(['trim-audio', wav, '--end-s', '0:75', '-o', out]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--end-s must be a number/);
  });

  it('compress --target-size-kb with another mode is refused clearly', async () => {
    const r = await kiln(['compress', photo, '--target-size-kb', '20', '--mode', 'quality', '-o', path.join(dir, 'x.jpg')]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--target-size-kb applies to mode targetSize only, not quality/);
  });

  it('compress --target-size-kb alone implies the target-size mode', async () => {
    const big = await makePhoto(dir, 'big.jpg', 600, 400);
    const out = path.join(dir, 'small.jpg');
    const r = await kiln(['compress', big, '--target-size-kb', '20', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(statSync(out).size <= 20 * 1024, `size ${statSync(out).size}`);
  });
});
