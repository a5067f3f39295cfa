/**
 * Where a job's files live. An upload held in memory makes no directory for its job: the run works in a
 * kept scratch directory (DATA_DIR/run-scratch) and its output becomes the file at the job's path; an
 * input that an engine reads from disk turns that path into a directory as before (output in its out/).
 * Whatever a run leaves in its scratch directory is gone before the next run gets it, and a restart
 * clears what a killed process left there.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { jpegBomb } from '../helpers/header-bombs.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';

/** A 24-bit BMP of w × h pixels of one colour (ImageMagick decodes it for kiln: it is written to disk). */
function bmp(w: number, h: number, [r, g, b]: [number, number, number]): Buffer {
  const row = Math.ceil((w * 3) / 4) * 4;
  const data = Buffer.alloc(row * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data.set([b, g, r], y * row + x * 3);
  const header = Buffer.alloc(54);
  header.write('BM', 0, 'latin1');
  header.writeUInt32LE(54 + data.length, 2);
  header.writeUInt32LE(54, 10);
  header.writeUInt32LE(40, 14);
  header.writeInt32LE(w, 18);
  header.writeInt32LE(h, 22);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(24, 28);
  header.writeUInt32LE(data.length, 34);
  return Buffer.concat([header, data]);
}

describe('job files of uploads held in memory', () => {
  let s: TestServer;
  const dir = tempDir('kiln-job-files-');
  const scratchRoot = () => path.join(s.dataDir, 'run-scratch');
  const jobPath = (id: string) => path.join(s.dataDir, 'jobs', id);

  const run = async (tool: string, file: Blob, settings: Record<string, unknown>) => {
    const res = await fetch(`${s.url}/api/v1/tools/image/${tool}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: await form({ file, settings: JSON.stringify(settings) }),
    });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const download = async (url: string) => {
    const res = await fetch(`${s.url}${url}`, { headers: { authorization: `Bearer ${s.token}` } });
    assert.equal(res.status, 200);
    return Buffer.from(await res.arrayBuffer());
  };
  /** Every scratch directory holds only its empty out/ (emptying runs after the answer: waited for). */
  const scratchIsEmpty = async () => {
    for (let i = 0; ; i++) {
      const left: string[] = [];
      for (const d of await readdir(scratchRoot()))
        for (const e of await readdir(path.join(scratchRoot(), d)))
          left.push(...(e === 'out' ? (await readdir(path.join(scratchRoot(), d, 'out'))).map((f) => `${d}/out/${f}`) : [`${d}/${e}`]));
      if (left.length === 0) return;
      if (i === 50) assert.fail(`left in the scratch directories: ${left.join(', ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('a small resize makes the output the file at the job path, and the scratch directory is emptied', async () => {
    const jpg = await makeImage(dir, 'small.jpg', 64, 48, { format: 'jpeg' });
    const r = await run('resize', await filePart(jpg), { width: 32 });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const st = await stat(jobPath(r.json.jobId));
    assert.ok(st.isFile(), 'the job path is the output file, not a directory');
    const out = await download(r.json.downloadUrl);
    assert.deepEqual(out, await readFile(jobPath(r.json.jobId)));
    const meta = await sharp(out).metadata();
    assert.equal(meta.format, 'jpeg');
    assert.equal(meta.width, 32);
    assert.match(r.json.downloadUrl, /small\.jpg$/);
    await scratchIsEmpty();
  });

  it('an input an engine reads from disk puts the output in the job directory, and the decoded copy leaves the scratch directory', async () => {
    const r = await run('convert', new Blob([new Uint8Array(bmp(20, 10, [200, 40, 10]))]), { format: 'png' });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const jobDir = jobPath(r.json.jobId);
    assert.ok((await stat(jobDir)).isDirectory());
    assert.deepEqual(await readdir(jobDir), ['out'], 'the input written out is removed, the output stays');
    const out = await download(r.json.downloadUrl);
    const { data, info } = await sharp(out).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height], [20, 10]);
    assert.deepEqual([...data.subarray(0, 3)], [200, 40, 10]);
    await scratchIsEmpty();
  });

  it('runs at the same time each get their own scratch directory and their own pixels', async () => {
    const colours: [number, number, number][] = [
      [250, 0, 0],
      [0, 250, 0],
      [0, 0, 250],
      [250, 250, 0],
    ];
    const files = await Promise.all(
      colours.map(async ([r, g, b], i) =>
        sharp({ create: { width: 80, height: 80, channels: 3, background: { r, g, b } } })
          .png()
          .toFile(path.join(dir, `c${i}.png`))
          .then(() => filePart(path.join(dir, `c${i}.png`))),
      ),
    );
    const answers = await Promise.all(files.map((f) => run('resize', f, { width: 10 })));
    for (const [i, a] of answers.entries()) {
      assert.equal(a.status, 200, JSON.stringify(a.json));
      const { data } = await sharp(await download(a.json.downloadUrl))
        .raw()
        .toBuffer({ resolveWithObject: true });
      const [r, g, b] = colours[i]!;
      assert.ok(
        Math.abs(data[0]! - r) < 8 && Math.abs(data[1]! - g) < 8 && Math.abs(data[2]! - b) < 8,
        `run ${i}: ${[...data.subarray(0, 3)]}`,
      );
    }
    await scratchIsEmpty();
    assert.ok((await readdir(scratchRoot())).length <= 2, 'no more scratch directories than runs at once (JOB_CONCURRENCY 2)');
  });

  it('a failed run leaves no job file and an empty scratch directory', async () => {
    // Refused by sharp from its header inside the run (in-process formats are not pre-read).
    const good = await readFile(await makeImage(dir, 'whole.jpg', 30, 20, { format: 'jpeg' }));
    const r = await run('resize', new Blob([new Uint8Array(jpegBomb(good, 60000, 60000))]), { width: 30 });
    assert.equal(r.status, 413, JSON.stringify(r.json));
    assert.equal(r.json.error.code, 'LIMIT_EXCEEDED');
    const jobs = await readdir(path.join(s.dataDir, 'jobs'));
    if (r.json.jobId) assert.ok(!jobs.includes(r.json.jobId));
    await scratchIsEmpty();
  });

  it('a restart clears what a killed process left in the scratch directories', async () => {
    const left = path.join(scratchRoot(), 'run-killed');
    await mkdir(path.join(left, 'out'), { recursive: true });
    await writeFile(path.join(left, 'out', 'half.jpg'), 'partial');
    s = await s.restart();
    assert.equal(
      await stat(left).then(
        () => 'still there',
        () => 'gone',
      ),
      'gone',
    );
    const jpg = await makeImage(dir, 'again.jpg', 40, 40, { format: 'jpeg' });
    const r = await run('resize', await filePart(jpg), { width: 20 });
    assert.equal(r.status, 200);
    assert.equal((await sharp(await download(r.json.downloadUrl)).metadata()).width, 20);
  });
});
