/**
 * Young collections after uploads (daemon/system/gc.ts afterUpload): a daemon receiving photos of
 * several MB frees the socket buffers they arrived in while they are young, so the uploads alone start
 * no full collection. Read from V8's own trace of a real `kiln serve` under two connections.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { describe, it } from 'node:test';
import { multipart } from '../../bench/lib.js';
import { makePhoto, tempDir } from '../helpers/fixtures.js';
import { startDaemonProcess } from '../helpers/daemon-process.js';

/** POSTs one resize (`m`: the multipart body) and reads the answer whole; resolves with its status. */
function postResize(url: string, auth: string, m: { body: Buffer; type: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/api/v1/tools/image/resize`,
      {
        method: 'POST',
        headers: { authorization: auth, 'content-type': m.type, 'content-length': m.body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(m.body);
  });
}

describe('young collections after uploads', () => {
  it('30 uploads of a ~5 MB photo on two connections start no full collection', async (t) => {
    const dir = tempDir('kiln-upload-gc-');
    const photo = await makePhoto(dir, 'big.jpg', 4000, 2500);
    const bytes = statSync(photo).size;
    assert.ok(bytes >= 4 * 1048576, `the photo is ${bytes} bytes`);
    const m = multipart(await readFile(photo), 'big.jpg', { width: 64 });
    // The young generation bin/kiln gives `serve` (node bin/kiln skips its shell preamble).
    const d = await startDaemonProcess(
      path.join(dir, 'data'),
      { SYNC_WAIT_MS: '300000', KILN_WARM_ENGINES: 'false' },
      {
        nodeFlags: ['--max-semi-space-size=8', '--trace-gc'],
      },
    );
    try {
      const auth = d.auth.authorization;
      // The first requests load the tool and grow the heap from its start-up size.
      for (let i = 0; i < 3; i++) assert.equal(await postResize(d.url, auth, m), 200);
      const from = d.stdout().length;
      const statuses: number[] = [];
      await Promise.all(
        [0, 1].map(async () => {
          for (let i = 0; i < 15; i++) statuses.push(await postResize(d.url, auth, m));
        }),
      );
      assert.deepEqual(new Set(statuses), new Set([200]));
      const trace = d.stdout().slice(from).split('\n');
      // "testing": the daemon's own idle-time collection (10 s after it listens), not one V8 started.
      const full = trace.filter((l) => l.includes('Mark-Compact') && !l.includes('testing'));
      const young = trace.filter((l) => l.includes('Scavenge'));
      t.diagnostic(`${full.length} full, ${young.length} young collections`);
      // Without the young collections: one full collection every ~6 such uploads (3–5 in three runs).
      assert.ok(full.length <= 1, `${full.length} full collections during the uploads:\n${full.join('\n')}`);
      // One at least after each upload (each is over 4 MB).
      assert.ok(young.length >= 30, `${young.length} young collections`);
    } finally {
      d.child.kill('SIGTERM');
      await d.exited;
    }
  });
});
