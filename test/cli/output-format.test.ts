/**
 * The output's name decides its format: JPEG bytes never land in a .png. A tool with a format setting
 * takes the format from the name; a tool without one has its output converted; a preset or a --format
 * that disagrees with the name is a usage error and nothing is written. Locally and with --server.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { ffprobe, makeAudio, makeSrt, makeVideo } from '../helpers/media.js';
import { api, filePart, form, startServer, type TestServer } from '../helpers/server.js';

const imageFormat = async (p: string) => (await sharp(p).metadata()).format;

describe('output format follows the output file name', () => {
  const dir = tempDir('kiln-outfmt-');
  let photo: string;
  before(async () => {
    photo = await makeImage(dir, 'photo.jpg', 200, 100);
  });

  it('a tool without a format setting: resize photo.jpg -o out.png writes PNG', async () => {
    const out = path.join(dir, 'out.png');
    const r = await kiln(['resize', photo, '--width', '100', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await imageFormat(out), 'png');
    assert.equal((await sharp(out).metadata()).width, 100);
  });

  it('a tool with a format setting takes it from the name, with the usual spellings', async () => {
    const avif = path.join(dir, 'b.avif');
    assert.equal((await kiln(['convert', photo, '-o', avif])).code, 0);
    assert.equal(await imageFormat(avif), 'heif');
    const jpeg = path.join(dir, 'b.jpeg');
    const r = await kiln(['convert', photo, '--format', 'jpeg', '-o', jpeg]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await imageFormat(jpeg), 'jpeg');
  });

  it('a format and a name that disagree are a usage error, and nothing is written', async () => {
    const out = path.join(dir, 'b2.jpg');
    const r = await kiln(['convert', photo, '--format', 'png', '-o', out]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /disagrees/);
    assert.equal(existsSync(out), false);
    const png = await makeImage(dir, 'p.png', 20, 20);
    const preset = await kiln(['png-to-jpg', png, '-o', path.join(dir, 'x.webp')]);
    assert.equal(preset.code, 2);
    assert.match(preset.stderr, /wrote JPG/);
    assert.equal(existsSync(path.join(dir, 'x.webp')), false);
    const cannot = await kiln(['convert-audio', makeAudio(dir, 'tone.wav'), '-o', path.join(dir, 'tone.avi')]);
    assert.equal(cannot.code, 2);
  });

  it('audio and video: convert-audio -o t.flac, convert-video -o x.mkv, trim-audio -o t.mp3', async () => {
    const wav = makeAudio(dir, 'tone2.wav', { durationS: 1 });
    const flac = path.join(dir, 't.flac');
    assert.equal((await kiln(['convert-audio', wav, '-o', flac])).code, 0);
    assert.equal(ffprobe(flac).format.format_name, 'flac');
    const clip = makeVideo(dir, 'clip.mp4', { durationS: 1 });
    const mkv = path.join(dir, 'x.mkv');
    const v = await kiln(['convert-video', clip, '-o', mkv]);
    assert.equal(v.code, 0, v.stderr);
    assert.match(ffprobe(mkv).format.format_name, /matroska/);
    const mp3 = path.join(dir, 'cut.mp3');
    const t = await kiln(['trim-audio', wav, '--start-s', '0', '--end-s', '0.5', '-o', mp3]);
    assert.equal(t.code, 0, t.stderr);
    assert.equal(ffprobe(mp3).format.format_name, 'mp3');
  });

  it('a conversion by name that would drop a subtitle track is refused: embed-subtitles clip.mp4 -o soft.mkv', async () => {
    const clip = makeVideo(dir, 'clip3.mp4', { durationS: 1 });
    const srt = makeSrt(dir, 'clip3.srt', [{ start: 0.1, end: 0.8, text: 'Hello' }]);
    const mkv = path.join(dir, 'soft.mkv');
    const r = await kiln(['embed-subtitles', clip, srt, '-o', mkv]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /name it \.mp4 \(converting to MKV would drop its subtitle track\)/);
    assert.equal(existsSync(mkv), false, 'was an MKV without the subtitle track, exit 0');
    const mp4 = path.join(dir, 'soft.mp4');
    assert.equal((await kiln(['embed-subtitles', clip, srt, '-o', mp4])).code, 0);
    assert.ok(ffprobe(mp4).streams.some((x) => x.codec_type === 'subtitle'));
  });
});

describe('output format with --server, and format spellings over HTTP', () => {
  let s: TestServer;
  let key: string;
  const dir = tempDir('kiln-outfmt-remote-');
  before(async () => {
    s = await startServer();
    key = (await api(s, s.token, 'POST', '/api/v1/api-keys', { name: 'cli' })).body.key;
  });
  after(() => s.close());

  it('resize --server photo.jpg -o out.png writes PNG', async () => {
    const photo = await makeImage(dir, 'photo.jpg', 120, 60);
    const out = path.join(dir, 'out.png');
    const r = await kiln(['resize', photo, '--width', '60', '-o', out, '--server', s.url], { env: { KILN_API_KEY: key } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await imageFormat(out), 'png');
    const conv = path.join(dir, 'c.webp');
    assert.equal((await kiln(['convert', photo, '-o', conv, '--server', s.url], { env: { KILN_API_KEY: key } })).code, 0);
    assert.equal(await imageFormat(conv), 'webp');
  });

  it('accepts jpeg for jpg in settings', async () => {
    const photo = await makeImage(dir, 'p.png', 30, 30);
    const r = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/convert',
      await form({ file: await filePart(photo), settings: '{"format":"jpeg"}' }),
    );
    assert.equal(r.status, 200, r.text);
    assert.match(r.body.downloadUrl, /\.jpg$/);
  });
});
