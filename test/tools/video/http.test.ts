/** Media tools over HTTP: a second `file` part, the batch route, and progress streamed as SSE. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../../helpers/fixtures.js';
import { ffprobe, makeAudio, makeVideo, stream, zeroCrossingHz } from '../../helpers/media.js';
import { filePart, form, readSse, startServer, type TestServer } from '../../helpers/server.js';

const dir = tempDir();
const auth = (t: string) => ({ authorization: `Bearer ${t}` });

describe('media tools over HTTP', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  async function download(url: string, name: string): Promise<string> {
    const p = path.join(dir, name);
    writeFileSync(p, Buffer.from(await (await fetch(s.url + url, { headers: auth(s.token) })).arrayBuffer()));
    return p;
  }

  it('replace-audio takes the audio as the second file part', async () => {
    const v = makeVideo(dir, 'v.mp4', { durationS: 1 });
    const a = makeAudio(dir, 'a.wav', { freq: 1000, durationS: 1 });
    const res = await fetch(`${s.url}/api/v1/tools/video/replace-audio`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ file: [await filePart(v), await filePart(a)] }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    const out = await download(body.downloadUrl, 'dub.mp4');
    assert.equal(stream(ffprobe(out), 'video')!.codec_name, 'h264');
    assert.ok(Math.abs(zeroCrossingHz(out, 0.3, 0.4) - 1000) < 30);
    const missing = await fetch(`${s.url}/api/v1/tools/video/replace-audio`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ file: [await filePart(v)] }),
    });
    assert.equal(missing.status, 400);
  });

  it('answers 415 for an audio-only file on a video tool', async () => {
    const a = makeAudio(dir, 'only.m4a');
    const res = await fetch(`${s.url}/api/v1/tools/video/mute-video`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ file: await filePart(a) }),
    });
    assert.equal(res.status, 415);
    assert.equal((await res.json()).error.code, 'UNSUPPORTED_INPUT');
  });

  it('runs an audio tool as a batch', async () => {
    const a = makeAudio(dir, 'b1.wav');
    const b = makeAudio(dir, 'b2.wav');
    const res = await fetch(`${s.url}/api/v1/tools/audio/volume-adjust/batch`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ files: [await filePart(a), await filePart(b)], settings: '{"gainDb": -6}' }),
    });
    assert.equal(res.status, 200);
    const buf = Buffer.from(await res.arrayBuffer());
    assert.equal(buf.subarray(0, 2).toString(), 'PK');
  });

  it('streams real ffmpeg progress of a long job as SSE', async () => {
    const lazy = await startServer({ env: { SYNC_WAIT_MS: '0' } });
    try {
      const v = makeVideo(dir, 'long.mp4', { durationS: 6, width: 320, height: 240 });
      const res = await fetch(`${lazy.url}/api/v1/tools/video/convert-video`, {
        method: 'POST',
        headers: auth(lazy.token),
        body: await form({ file: await filePart(v), settings: '{"format": "webm"}' }),
      });
      const { jobId } = await res.json();
      assert.equal(res.status, 202);
      const sse = await readSse(`${lazy.url}/api/v1/jobs/${jobId}/progress`, lazy.token, 120_000);
      assert.equal(sse.events.at(-1)?.event, 'completed', JSON.stringify(sse.events.at(-1)));
      const pcts = sse.events.filter((e) => e.event === 'progress').map((e) => (e.data as { percent: number }).percent);
      const mid = pcts.filter((p) => p > 0 && p < 100);
      assert.ok(mid.length >= 1, `progress events ${pcts.join(',')}`);
      for (let i = 1; i < pcts.length; i++) assert.ok(pcts[i]! >= pcts[i - 1]!, pcts.join(','));
    } finally {
      await lazy.close();
    }
  });
});
