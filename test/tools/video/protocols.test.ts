/** ffmpeg opens inputs through local files only: a URL as an input (or inside one) is never fetched. */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import path from 'node:path';
import { describe, it } from 'node:test';
import { localInputs, runFfmpeg } from '../../../src/engines/ffmpeg/run.js';
import { tempDir } from '../../helpers/fixtures.js';
import { makeVideo } from '../../helpers/media.js';

describe('ffmpeg input protocols', () => {
  const dir = tempDir('kiln-proto-');

  it('puts the whitelist before every input', () => {
    assert.deepEqual(localInputs(['-i', 'a.mp4', '-i', 'b.wav', '-map', '0']), [
      '-protocol_whitelist',
      'file,pipe',
      '-i',
      'a.mp4',
      '-protocol_whitelist',
      'file,pipe',
      '-i',
      'b.wav',
      '-map',
      '0',
    ]);
  });

  it('refuses an http input and a concat list naming one, without a request; local files still work', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/clip.mp4`;
    try {
      await assert.rejects(runFfmpeg(['-i', url, '-f', 'null', '-']), /whitelist|not allowed|Protocol/i);
      const list = path.join(dir, 'list.txt');
      const { writeFile } = await import('node:fs/promises');
      await writeFile(list, `ffconcat version 1.0\nfile '${url}'\n`);
      await assert.rejects(runFfmpeg(['-f', 'concat', '-safe', '0', '-i', list, '-f', 'null', '-']));
      assert.equal(hits, 0, 'ffmpeg made no request');
      const clip = makeVideo(dir, 'ok.mp4', { durationS: 0.5, audio: false });
      await runFfmpeg(['-i', clip, '-f', 'null', '-']);
    } finally {
      server.close();
    }
  });
});
