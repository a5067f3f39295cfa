/**
 * Uploads held in memory (daemon/http/memory-inputs.ts): a tool that declares `input.inMemory` gets its
 * upload as bytes, every other one from disk; the arenas come back after each job, the budget sends what
 * does not fit to disk, and a wrong, damaged or oversized file is refused as from disk, leaving nothing.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { MemoryInputs } from '../../daemon/http/memory-inputs.js';
import { createWorkspace } from '../../src/core/workspace.js';
import { getTool } from '../../src/tools/index.js';
import { runTool } from '../../src/tools/run-tool.js';
import { makeImage, makePhoto, tempDir } from '../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';

const KB = 1024;
const MB = 1024 * KB;

describe('MemoryInputs', () => {
  it('leases arenas by size class, reuses the smallest that fits and keeps to its limit', () => {
    const m = new MemoryInputs(8 * MB);
    const a = m.reserve(100)!;
    assert.equal(a.arena.length, 256 * KB);
    const b = m.reserve(3 * MB + 1)!;
    assert.equal(b.arena.length, 4 * MB);
    assert.deepEqual(m.usage, { leased: 4 * MB + 256 * KB, free: 0 });
    // 4 MB more would pass 8 MB.
    assert.equal(m.reserve(4 * MB), undefined);
    b.release();
    b.release();
    assert.deepEqual(m.usage, { leased: 256 * KB, free: 4 * MB });
    // The free 4-MB arena serves a 2-MB body rather than a new one being allocated.
    const c = m.reserve(2 * MB)!;
    assert.equal(c.arena, b.arena);
    c.release();
    a.release();
    // A body larger than any free arena drops free ones to make room.
    const d = m.reserve(7 * MB)!;
    assert.equal(d.arena.length, 7 * MB);
    assert.ok(m.usage.leased + m.usage.free <= 8 * MB);
    for (const bad of [0, -1, Number.NaN, 1.5, Number.POSITIVE_INFINITY]) assert.equal(m.reserve(bad), undefined);
    // The daemon's quiet moment: every free arena goes, a leased one stays.
    const e = m.reserve(300 * KB)!;
    d.release();
    assert.ok(m.usage.free > 0);
    m.dropFree();
    assert.deepEqual(m.usage, { leased: 512 * KB, free: 0 });
    e.release();
  });

  it('drops a free arena left unused, and every free one once uploads stop', async () => {
    const m = new MemoryInputs(64 * MB, { keepMs: 100, idleMs: 400 });
    const big = m.reserve(10 * MB)!;
    big.release();
    await new Promise((r) => setTimeout(r, 150));
    // Small bodies keep coming; the big arena, unused for longer than keepMs, is not kept for them.
    const small = m.reserve(KB)!;
    assert.notEqual(small.arena, big.arena);
    small.release();
    assert.deepEqual(m.usage, { leased: 0, free: 256 * KB });
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(m.usage, { leased: 0, free: 0 });
  });
});

describe('uploads held in memory', () => {
  let s: TestServer;
  let small: TestServer;
  let capped: TestServer;
  const dir = tempDir('kiln-memin-');
  before(async () => {
    [s, small, capped] = await Promise.all([
      startServer(),
      startServer({ env: { MEMORY_INPUTS_MB: '1' } }),
      startServer({ env: { MAX_UPLOAD_MB: '1' } }),
    ]);
  });
  after(async () => {
    await Promise.all([s.close(), small.close(), capped.close()]);
  });

  const post = async (srv: TestServer, route: string, fields: Record<string, string | Blob>) => {
    const r = await fetch(`${srv.url}/api/v1/tools/${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${srv.token}` },
      body: await form(fields),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  const download = async (srv: TestServer, url: string) =>
    Buffer.from(await (await fetch(srv.url + url, { headers: { authorization: `Bearer ${srv.token}` } })).arrayBuffer());
  const memory = (srv: TestServer) => srv.app.kiln.memoryInputs!.usage;
  /** What the job left in its input directory (nothing of an upload held in memory is ever written). */
  const inputsOnDisk = (srv: TestServer, jobId: string) => {
    const d = path.join(srv.config.dataDir, 'jobs', jobId, 'in');
    return existsSync(d) ? readdirSync(d) : [];
  };

  it('runs resize from memory and gives the arena back', async () => {
    const src = await makeImage(dir, 'wide.jpg', 400, 200);
    const r = await post(s, 'image/resize', { file: await filePart(src), settings: '{"width":100}' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const out = await sharp(await download(s, r.body.downloadUrl))
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.deepEqual([out.info.width, out.info.height], [100, 50]);
    // Left red, right blue, as drawn.
    assert.ok(out.data[(25 * 100 + 10) * 3]! > 200 && out.data[(25 * 100 + 90) * 3 + 2]! > 200);
    assert.equal(memory(s).leased, 0);
    assert.ok(memory(s).free > 0, 'the upload went through an arena');
    assert.deepEqual(inputsOnDisk(s, r.body.jobId), []);
  });

  it('writes the bytes to disk for an engine that reads files (a Photoshop file through ImageMagick)', async () => {
    const psd = path.join(dir, 'layers.psd');
    execFileSync('convert', ['-size', '120x60', 'xc:red', '-fill', 'blue', '-draw', 'rectangle 60,0 119,59', psd]);
    const r = await post(s, 'image/resize', { file: await filePart(psd), settings: '{"width":60}' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const { data, info } = await sharp(await download(s, r.body.downloadUrl))
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height], [60, 30]);
    assert.deepEqual([...data.subarray((15 * 60 + 10) * 3, (15 * 60 + 10) * 3 + 3)], [255, 0, 0]);
    assert.deepEqual([...data.subarray((15 * 60 + 50) * 3, (15 * 60 + 50) * 3 + 3)], [0, 0, 255]);
    assert.equal(memory(s).leased, 0);
  });

  it('gives a tool that reads paths its upload on disk, without an arena', async () => {
    const src = await makeImage(dir, 'turn.png', 40, 20);
    const before = memory(s);
    const r = await post(s, 'image/rotate', { file: await filePart(src), settings: '{"angle":90}' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const meta = await sharp(await download(s, r.body.downloadUrl)).metadata();
    assert.deepEqual([meta.width, meta.height], [20, 40]);
    assert.deepEqual(memory(s), before);
  });

  it('refuses a file whose bytes are not an image, and a damaged one, and frees their arenas', async () => {
    const text = path.join(dir, 'fake.jpg');
    await writeFile(text, 'this is plain text, not a JPEG\n'.repeat(20));
    const wrong = await post(s, 'image/resize', { file: await filePart(text), settings: '{"width":10}' });
    assert.equal(wrong.status, 415);
    assert.equal(wrong.body.error.code, 'UNSUPPORTED_INPUT');
    const whole = await readFile(await makePhoto(dir, 'cut.png', 400, 300));
    const cut = path.join(dir, 'cut-half.png');
    await writeFile(cut, whole.subarray(0, whole.length >> 1));
    const damaged = await post(s, 'image/resize', { file: await filePart(cut), settings: '{"width":100}' });
    assert.equal(damaged.status, 415, JSON.stringify(damaged.body));
    assert.equal(damaged.body.error.code, 'UNSUPPORTED_INPUT');
    assert.equal(memory(s).leased, 0);
  });

  it('refuses a file over the upload limit while copying it into memory or to disk, and keeps none of it', async () => {
    const big = await makePhoto(dir, 'over.jpg', 2000, 1600);
    assert.ok((await readFile(big)).length > MB, 'the photo is larger than MAX_UPLOAD_MB=1');
    const r = await post(capped, 'image/resize', { file: await filePart(big), settings: '{"width":140}' });
    assert.equal(r.status, 413, JSON.stringify(r.body));
    assert.equal(r.body.error.code, 'LIMIT_EXCEEDED');
    assert.match(r.body.error.message, /over\.jpg is larger than the upload limit of 1 MB/);
    assert.equal(memory(capped).leased, 0);
    assert.ok(memory(capped).free > 0, 'the upload went through an arena');
    // A tool that reads paths has it written to disk: refused alike, and no part of it stays there.
    const onDisk = await post(capped, 'image/rotate', { file: await filePart(big), settings: '{"angle":90}' });
    assert.equal(onDisk.status, 413, JSON.stringify(onDisk.body));
    assert.match(onDisk.body.error.message, /over\.jpg is larger than the upload limit of 1 MB/);
    const jobsDir = path.join(capped.config.dataDir, 'jobs');
    assert.deepEqual(existsSync(jobsDir) ? readdirSync(jobsDir) : [], []);
    // The next upload is read whole from memory as before.
    const ok = await post(capped, 'image/resize', {
      file: await filePart(await makeImage(dir, 'after.png', 80, 40)),
      settings: '{"width":20}',
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(inputsOnDisk(capped, ok.body.jobId), []);
  });

  it('gives the arena back when the body stops in the middle of a file, and goes on serving', async () => {
    const photo = await readFile(await makePhoto(dir, 'cut-off.jpg', 600, 400));
    const boundary = 'kilncutoff';
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="settings"\r\n\r\n{"width":50}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut-off.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const { port } = new URL(s.url);
    // Half the photo sent, then the connection closed: the part being copied into memory ends in an error.
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /api/v1/tools/image/resize HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.token}\r\n` +
            `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + photo.length + tail.length}\r\n\r\n`,
        );
        socket.write(Buffer.concat([head, photo.subarray(0, photo.length >> 1)]), () => setTimeout(() => socket.destroy(), 200));
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    const deadline = Date.now() + 5000;
    while (memory(s).leased > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(memory(s).leased, 0);
    const ok = await post(s, 'image/resize', { file: await filePart(await makeImage(dir, 'next.png', 60, 30)), settings: '{"width":30}' });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await sharp(await download(s, ok.body.downloadUrl)).metadata()).width, 30);
  });

  it('streams a body larger than the budget to disk as before', async () => {
    const big = await makePhoto(dir, 'big.jpg', 2000, 1600);
    assert.ok((await readFile(big)).length > MB, 'the photo is larger than MEMORY_INPUTS_MB=1');
    const r = await post(small, 'image/resize', { file: await filePart(big), settings: '{"width":140}' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await sharp(await download(small, r.body.downloadUrl)).metadata()).width, 140);
    assert.deepEqual(memory(small), { leased: 0, free: 0 });
  });
});

describe('runTool with an input held in memory', () => {
  const dir = tempDir('kiln-memin-run-');
  it('writes it to its path first for a tool that reads paths', async () => {
    const bytes = await readFile(await makeImage(dir, 'src.png', 40, 20));
    const ws = await createWorkspace();
    try {
      const file = { path: path.join(ws.dir, 'in', '0-src.png'), name: 'src.png', size: bytes.length, bytes };
      const out = await runTool(getTool('rotate'), { files: [file], extra: {} }, { angle: 90 }, { workDir: ws.dir, dataDir: dir });
      assert.deepEqual(await readFile(file.path), bytes);
      assert.equal(file.bytes, undefined, 'the bytes are dropped once on disk');
      const meta = await sharp(out.output!.path).metadata();
      assert.deepEqual([meta.width, meta.height], [20, 40]);
    } finally {
      await ws.dispose();
    }
  });
});
