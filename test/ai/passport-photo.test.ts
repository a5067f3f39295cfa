/**
 * passport-photo with the real background-removal and face-detection bundles on a real portrait
 * (the right-hand woman of face-api's sample4): exact pixel size at dpi, the face where the rule puts
 * it (found again by the face detector on the output), print sheets, the size limit, and the two
 * HTTP phases.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { detectFaces } from '../../src/ai/tasks/faces.js';
import type { KilnError } from '../../src/core/errors.js';
import { createWorkspace } from '../../src/core/workspace.js';
import { PHOTO_RULES, RULE_COUNTRIES } from '../../src/tools/image/ai/passport-rules.js';
import { getTool } from '../../src/tools/index.js';
import { inputFile, type RunOutcome, runTool } from '../../src/tools/run-tool.js';
import { tempDir } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { unzip } from '../tools/image/b-helpers.js';
import { installForTest } from './install-helper.js';
import { samplePhoto } from './photos.js';

const dir = tempDir('kiln-ai-passport-');
const dataDir = path.join(dir, 'data');
let portrait = '';

async function run(settings: Record<string, unknown>): Promise<RunOutcome & { file: string }> {
  const ws = await createWorkspace();
  try {
    const r = await runTool(getTool('passport-photo'), { files: [await inputFile(portrait)], extra: {} }, settings, {
      workDir: ws.dir,
      dataDir,
    });
    const file = path.join(mkdtempSync(path.join(dir, 'out-')), r.output!.name);
    cpSync(r.output!.path, file);
    return { ...r, file };
  } finally {
    await ws.dispose();
  }
}

/** Eye midpoint of the largest face the detector finds in an output photo. */
async function eyesOf(img: Buffer): Promise<{ x: number; y: number }> {
  // A face filling the frame is hard for the detector: look at it with a white margin around.
  const m = await sharp(img).metadata();
  const pad = Math.round(m.width! / 2);
  const { data, info } = await sharp(img)
    .removeAlpha()
    .extend({ top: pad, bottom: pad, left: pad, right: pad, background: '#ffffff' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const faces = await detectFaces(
    { width: info.width, height: info.height, rgb: new Uint8Array(data) },
    { minConfidence: 0.4 },
    { dataDir },
  );
  assert.ok(faces.length >= 1, 'a face in the output');
  const f = faces[0]!;
  const avg = (a: number, b: number) =>
    f.landmarks.slice(a, b).reduce((s, p) => ({ x: s.x + p.x / (b - a), y: s.y + p.y / (b - a) }), { x: 0, y: 0 });
  const l = avg(36, 42);
  const r = avg(42, 48);
  return { x: (l.x + r.x) / 2 - pad, y: (l.y + r.y) / 2 - pad };
}

before(async () => {
  await installForTest('background-removal', dataDir);
  await installForTest('face-detection', dataDir);
  const full = await samplePhoto(dir, 4, 1920);
  portrait = path.join(dir, 'portrait.jpg');
  await sharp(full).extract({ left: 1000, top: 0, width: 500, height: 800 }).jpeg({ quality: 92 }).toFile(portrait);
});

describe('passport-photo rules', () => {
  it('covers at least 30 countries, each rule with its source', () => {
    assert.ok(RULE_COUNTRIES.length >= 30, `${RULE_COUNTRIES.length} countries`);
    for (const r of PHOTO_RULES) {
      assert.ok(r.source.length > 10, `${r.country} ${r.documentType} has a source`);
      assert.ok(r.head.minMm < r.head.maxMm && r.head.maxMm < r.heightMm, `${r.country} head range`);
    }
  });
});

describe('passport-photo', () => {
  it('US: 2×2 in at 300 dpi, white background, eyes centred at the rule’s eye line', async () => {
    const r = await run({ countryCode: 'US' });
    const meta = await sharp(r.file).metadata();
    assert.equal(meta.format, 'jpeg');
    assert.deepEqual([meta.width, meta.height, meta.density], [600, 600, 300]);
    const d = r.data!;
    assert.equal(d.faces, 1);
    const head = d.headHeightMm as number;
    assert.ok(head >= 25.4 && head <= 34.9, `head ${head} mm`);
    const eyes = await eyesOf(await sharp(r.file).toBuffer());
    assert.ok(Math.abs(eyes.x - 300) < 25, `eyes x ${eyes.x}`);
    // Eyes 1⅛–1⅜ in above the bottom: y between 600 − 412 and 600 − 338.
    assert.ok(eyes.y > 188 && eyes.y < 262, `eyes y ${eyes.y}`);
    // The lavender wall became the white background (a neighbour's head still shares the frame).
    const { data } = await sharp(r.file).raw().toBuffer({ resolveWithObject: true });
    let white = 0;
    for (let i = 0; i < data.length; i += 3) if (data[i]! >= 245 && data[i + 1]! >= 245 && data[i + 2]! >= 245) white++;
    assert.ok(white > 0.05 * 600 * 600, `white pixels ${white}`);
  });

  it('DE with an A4 print sheet and maxFileSizeKb: a ZIP of the 35×45 mm photo and the sheet', async () => {
    const r = await run({ countryCode: 'de', printLayout: 'a4', maxFileSizeKb: 40, bgColor: '#e6e6e6' });
    assert.match(r.file, /\.zip$/);
    const entries = await unzip(r.file);
    const photo = entries.find((e) => !e.name.includes('-a4'))!;
    const sheet = entries.find((e) => e.name.includes('-a4'))!;
    const pm = await sharp(photo.data).metadata();
    assert.deepEqual([pm.width, pm.height], [413, 531]);
    assert.ok(photo.data.length <= 40 * 1024, `${photo.data.length} bytes`);
    const sm = await sharp(sheet.data).metadata();
    assert.deepEqual([sm.width, sm.height].sort(), [2480, 3508].sort());
    assert.ok((r.data!.copies as number) >= 20, `copies ${r.data!.copies}`);
    const eyes = await eyesOf(photo.data);
    assert.ok(Math.abs(eyes.x - 206) < 25, `eyes x ${eyes.x}`);
  });

  it('refuses an impossible maxFileSizeKb and an unknown country', async () => {
    await assert.rejects(run({ countryCode: 'US', maxFileSizeKb: 1 }), (e: KilnError) => {
      assert.equal(e.code, 'VALIDATION_ERROR');
      assert.match(e.message, /maxFileSizeKb 1: .* KB even at JPEG quality 10/);
      return true;
    });
    await assert.rejects(run({ countryCode: 'XX' }), (e: KilnError) => {
      assert.equal(e.code, 'VALIDATION_ERROR');
      assert.match(e.message, /countries: .*US/);
      return true;
    });
  });
});

describe('passport-photo over HTTP', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startServer({ dataDir, env: { SYNC_WAIT_MS: '120000' } });
  });
  after(() => srv.app.close());

  it('analyze returns landmarks, a preview and dimensions; generate makes the photo from them', async () => {
    const auth = { authorization: `Bearer ${srv.token}` };
    const form = new FormData();
    const { readFile } = await import('node:fs/promises');
    form.append('file', new Blob([await readFile(portrait)], { type: 'image/jpeg' }), 'me.jpg');
    const a = await fetch(`${srv.url}/api/v1/tools/image/passport-photo/analyze`, { method: 'POST', headers: auth, body: form });
    assert.equal(a.status, 200, await a.clone().text());
    const analysis = (await a.json()) as Record<string, unknown> & { landmarks: { points: unknown[] } };
    assert.equal(analysis.filename, 'me.jpg');
    assert.deepEqual([analysis.imageWidth, analysis.imageHeight], [500, 800]);
    assert.equal(analysis.landmarks.points.length, 68);
    assert.match(analysis.preview as string, /^data:image\/jpeg;base64,/);

    const body = {
      jobId: analysis.jobId,
      filename: analysis.filename,
      countryCode: 'GB',
      landmarks: analysis.landmarks,
      imageWidth: analysis.imageWidth,
      imageHeight: analysis.imageHeight,
    };
    const g = await fetch(`${srv.url}/api/v1/tools/image/passport-photo/generate`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(g.status, 200, await g.clone().text());
    const done = (await g.json()) as { downloadUrl: string };
    const file = Buffer.from(await (await fetch(srv.url + done.downloadUrl, { headers: auth })).arrayBuffer());
    const meta = await sharp(file).metadata();
    assert.deepEqual([meta.width, meta.height], [413, 531]);

    const missing = await fetch(`${srv.url}/api/v1/tools/image/passport-photo/generate`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, jobId: 'nosuchjob123' }),
    });
    assert.equal(missing.status, 404);
    const spec = await (await fetch(`${srv.url}/api/v1/openapi.yaml`)).text();
    assert.ok(spec.includes('/api/v1/tools/image/passport-photo/analyze'), 'analyze in the OpenAPI document');
    assert.ok(spec.includes('/api/v1/tools/image/passport-photo/generate'), 'generate in the OpenAPI document');
  });
});
