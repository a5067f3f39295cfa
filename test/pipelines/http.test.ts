/**
 * Pipelines over HTTP: saved records (owned, admins see all), runs of saved and ad-hoc pipelines on
 * one file (200 and 202 with step progress over SSE) and on many (ZIP), validation before running, a
 * failing step naming itself, and an image step followed by a PDF step.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PDFDocument } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import { createUser } from '../../daemon/store/users.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, login, readSse, startServer, type TestServer } from '../helpers/server.js';
import { readZip } from '../helpers/zip.js';

const dir = tempDir();
const auth = (t: string) => ({ authorization: `Bearer ${t}` });

const THREE_STEPS = {
  name: 'thumbs',
  description: 'resize, rotate, then WebP',
  steps: [
    { tool: 'resize', settings: { width: 40 } },
    { tool: 'rotate', settings: { angle: 90 } },
    { tool: 'convert', settings: { format: 'webp' } },
  ],
};

async function download(s: TestServer, url: string): Promise<Buffer> {
  const res = await fetch(s.url + url, { headers: auth(s.token) });
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

describe('pipelines over HTTP', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('saves, lists, gets, updates and deletes pipelines; others get 404, admins see all', async () => {
    const created = await api(s, s.token, 'POST', '/api/v1/pipelines', THREE_STEPS);
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.name, 'thumbs');
    assert.equal(created.body.steps.length, 3);
    const dup = await api(s, s.token, 'POST', '/api/v1/pipelines', THREE_STEPS);
    assert.equal(dup.status, 409);

    const bad = await api(s, s.token, 'POST', '/api/v1/pipelines', { name: 'bad', steps: [{ tool: 'resize', settings: { width: -5 } }] });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /step 1 \(resize\)/);
    const misfit = await api(s, s.token, 'POST', '/api/v1/pipelines', {
      name: 'misfit',
      steps: [
        { tool: 'resize', settings: { width: 10 } },
        { tool: 'rotate-pdf', settings: { angle: 90 } },
      ],
    });
    assert.equal(misfit.status, 400, misfit.text);
    assert.match(misfit.body.error.message, /step 2 \(rotate-pdf\).*step 1 produces/);
    const nameless = await api(s, s.token, 'POST', '/api/v1/pipelines', { steps: [{ tool: 'resize', settings: { width: 10 } }] });
    assert.equal(nameless.status, 400);
    // An unknown top-level key (a typo) is refused on create, validate and an ad-hoc run, never dropped; scope is the
    // record's, and validate takes a save body as it is.
    const typo = { name: 'typo', scope: 'private', steps: [{ tool: 'resize', settings: { width: 10 } }], stpes: [] };
    for (const route of ['/api/v1/pipelines', '/api/v1/pipelines/validate']) {
      const r = await api(s, s.token, 'POST', route, typo);
      assert.equal(r.status, 400, `${route}: ${r.text}`);
      assert.equal(r.body.error.code, 'VALIDATION_ERROR');
      assert.deepEqual(r.body.error.details, [
        { path: 'stpes', message: 'unknown key "stpes" (did you mean steps?); a pipeline has name, description, steps' },
      ]);
    }
    const saveBody = { name: 'ok', scope: 'private', steps: [{ tool: 'resize', settings: { width: 10 } }] };
    const valid = await api(s, s.token, 'POST', '/api/v1/pipelines/validate', saveBody);
    assert.equal(valid.status, 200, valid.text);
    assert.equal(valid.body.name, 'ok');
    const adHoc = await api(
      s,
      s.token,
      'POST',
      '/api/v1/pipelines/run',
      await form({
        file: await filePart(await makeImage(dir, 'typo.jpg', 20, 10)),
        pipeline: JSON.stringify({ ...typo, scope: undefined }),
      }),
    );
    assert.equal(adHoc.status, 400, adHoc.text);
    assert.match(adHoc.body.error.message, /unknown key "stpes"/);

    const list = await api(s, s.token, 'GET', '/api/v1/pipelines');
    assert.deepEqual(
      list.body.pipelines.map((p: any) => p.name),
      ['thumbs'],
    );
    assert.equal((await api(s, s.token, 'GET', `/api/v1/pipelines/${created.body.id}`)).body.name, 'thumbs');
    // A person's own pipeline can be named instead of its id.
    assert.equal((await api(s, s.token, 'GET', '/api/v1/pipelines/thumbs')).body.id, created.body.id);

    const updated = await api(s, s.token, 'PUT', `/api/v1/pipelines/${created.body.id}`, { ...THREE_STEPS, description: 'changed' });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.description, 'changed');
    const typoPut = await api(s, s.token, 'PUT', `/api/v1/pipelines/${created.body.id}`, { ...THREE_STEPS, descriptoin: 'lost' });
    assert.equal(typoPut.status, 400, typoPut.text);
    assert.match(typoPut.body.error.message, /unknown key "descriptoin" \(did you mean description\?\)/);
    assert.equal((await api(s, s.token, 'GET', `/api/v1/pipelines/${created.body.id}`)).body.description, 'changed', 'left as it was');

    await createUser(s.app.kiln.store.db, { username: 'dora', password: 'dora-password-1', role: 'user' });
    const dora = await login(s.url, 'dora', 'dora-password-1');
    assert.equal((await api(s, dora, 'GET', `/api/v1/pipelines/${created.body.id}`)).status, 404);
    assert.equal((await api(s, dora, 'PUT', `/api/v1/pipelines/${created.body.id}`, THREE_STEPS)).status, 404);
    assert.equal((await api(s, dora, 'DELETE', `/api/v1/pipelines/${created.body.id}`)).status, 404);
    const jpg = await makeImage(dir, 'd.jpg', 20, 10);
    assert.equal(
      (await api(s, dora, 'POST', `/api/v1/pipelines/${created.body.id}/run`, await form({ file: await filePart(jpg) }))).status,
      404,
    );
    const doras = await api(s, dora, 'POST', '/api/v1/pipelines', { ...THREE_STEPS, name: 'doras' });
    assert.equal(doras.status, 201);
    assert.deepEqual(
      (await api(s, dora, 'GET', '/api/v1/pipelines')).body.pipelines.map((p: any) => p.name),
      ['doras'],
    );
    // The admin sees both and may open dora's.
    assert.deepEqual((await api(s, s.token, 'GET', '/api/v1/pipelines')).body.pipelines.map((p: any) => p.name).sort(), [
      'doras',
      'thumbs',
    ]);
    assert.equal((await api(s, s.token, 'GET', `/api/v1/pipelines/${doras.body.id}`)).status, 200);

    assert.equal((await api(s, dora, 'DELETE', `/api/v1/pipelines/${doras.body.id}`)).status, 200);
    assert.equal((await api(s, dora, 'GET', `/api/v1/pipelines/${doras.body.id}`)).status, 404);
  });

  it('runs a saved three-step image pipeline on one file (200) and on many (ZIP)', async () => {
    const jpg = await makeImage(dir, 'wide.jpg', 80, 40);
    const run = await api(s, s.token, 'POST', '/api/v1/pipelines/thumbs/run', await form({ file: await filePart(jpg) }));
    assert.equal(run.status, 200, run.text);
    assert.match(run.body.downloadUrl, /\.webp$/);
    const meta = await sharp(await download(s, run.body.downloadUrl)).metadata();
    // resize to 40×20, rotate 90° → 20×40, WebP.
    assert.equal(meta.format, 'webp');
    assert.deepEqual([meta.width, meta.height], [20, 40]);
    const job = await api(s, s.token, 'GET', `/api/v1/jobs/${run.body.jobId}`);
    assert.equal(job.body.tool, 'pipeline:thumbs');
    assert.deepEqual(
      job.body.settings.steps.map((x: any) => x.tool),
      ['resize', 'rotate', 'convert'],
    );
    // The job keeps its result only: the steps' intermediate files stayed beside it until the output expired.
    const kept = await readdir(path.join(s.dataDir, 'jobs', run.body.jobId)).catch(() => []);
    assert.deepEqual(
      kept.filter((n) => n !== 'out'),
      [],
    );

    const png = await makeImage(dir, 'other.png', 40, 40, { format: 'png' });
    const res = await fetch(`${s.url}/api/v1/pipelines/thumbs/batch`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ files: [await filePart(jpg), await filePart(png)] }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/zip');
    assert.match(res.headers.get('content-disposition') ?? '', /filename="pipeline-thumbs-batch\.zip"/);
    // As a tool's batch: the counts in the headers, the inputs in order.
    assert.deepEqual(
      ['x-batch-total', 'x-batch-succeeded', 'x-batch-failed'].map((h) => res.headers.get(h)),
      ['2', '2', '0'],
    );
    const entries = await readZip(Buffer.from(await res.arrayBuffer()));
    const manifest = JSON.parse(entries.get('manifest.json')!.toString());
    assert.equal(manifest.succeeded, 2, JSON.stringify(manifest));
    assert.deepEqual(
      manifest.items.map((m: { input: string }) => m.input),
      ['wide.jpg', 'other.png'],
    );
    for (const item of manifest.items) assert.equal((await sharp(entries.get(item.output)!).metadata()).format, 'webp');

    // An ad-hoc pipeline over many files: the pipeline travels in its own form field.
    const adhoc = JSON.stringify({
      steps: [
        { tool: 'resize', settings: { width: 10 } },
        { tool: 'convert', settings: { format: 'gif' } },
      ],
    });
    const res2 = await fetch(`${s.url}/api/v1/pipelines/batch`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ pipeline: adhoc, files: [await filePart(jpg), await filePart(png)] }),
    });
    assert.equal(res2.status, 200);
    const entries2 = await readZip(Buffer.from(await res2.arrayBuffer()));
    const manifest2 = JSON.parse(entries2.get('manifest.json')!.toString());
    assert.equal(manifest2.succeeded, 2, JSON.stringify(manifest2));
    for (const item of manifest2.items) {
      const m = await sharp(entries2.get(item.output)!).metadata();
      assert.deepEqual([m.format, m.width], ['gif', 10]);
    }
    const noPipeline = await fetch(`${s.url}/api/v1/pipelines/batch`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ files: [await filePart(jpg)] }),
    });
    assert.equal(noPipeline.status, 400);
    // A later step's missing feature bundle refuses the batch before any input runs (it was a 200
    // archive of failed items, each after its step 1 had run).
    const cutout = JSON.stringify({ steps: [{ tool: 'resize', settings: { width: 10 } }, { tool: 'remove-background' }] });
    const missing = await fetch(`${s.url}/api/v1/pipelines/batch`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ pipeline: cutout, files: [await filePart(jpg), await filePart(png)] }),
    });
    assert.equal(missing.status, 409);
    const err = ((await missing.json()) as { error: { code: string; message: string } }).error;
    assert.equal(err.code, 'FEATURE_NOT_INSTALLED');
    assert.match(err.message, /^step 2\/2 \(remove-background\): /);
  });

  it('runs an ad-hoc pipeline, refuses an invalid one before running, and names a failing step', async () => {
    const jpg = await makeImage(dir, 'adhoc.jpg', 60, 30);
    const pipeline = JSON.stringify({ steps: [{ tool: 'rotate', settings: { horizontal: true } }, { tool: 'jpg-to-png' }] });
    const ok = await api(s, s.token, 'POST', '/api/v1/pipelines/run', await form({ file: await filePart(jpg), pipeline }));
    assert.equal(ok.status, 200, ok.text);
    const out = await sharp(await download(s, ok.body.downloadUrl))
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.equal(out.info.width, 60);
    // Flipped: the left edge is now blue.
    assert.ok(out.data[2]! > 200 && out.data[0]! < 60, `left pixel ${out.data.subarray(0, 3).join(',')}`);

    const invalid = await api(
      s,
      s.token,
      'POST',
      '/api/v1/pipelines/run',
      await form({
        file: await filePart(jpg),
        pipeline: JSON.stringify({ steps: [{ tool: 'resize', settings: { width: 10 } }, { tool: 'no-such-tool' }] }),
      }),
    );
    assert.equal(invalid.status, 400);
    assert.match(invalid.body.error.message, /step 2 \(no-such-tool\)/);
    // A pipeline takes no settings of its own: a settings or stray text field is refused (it was dropped
    // silently on this route while the batch route refused it), and nothing runs.
    for (const extra of [{ settings: '{"width": 5}' }, { width: '5' }] as Record<string, string>[]) {
      const stray = await api(s, s.token, 'POST', '/api/v1/pipelines/run', await form({ file: await filePart(jpg), pipeline, ...extra }));
      assert.equal(stray.status, 400, stray.text);
      assert.equal(stray.body.error.code, 'VALIDATION_ERROR');
      assert.match(stray.body.error.message, /width/);
    }
    // A later step's missing feature bundle is refused before queueing (a fresh data dir has none),
    // not found by a job at step 2 once step 1 has run.
    const cutout = JSON.stringify({ steps: [{ tool: 'resize', settings: { width: 20 } }, { tool: 'remove-background' }] });
    const missing = await api(s, s.token, 'POST', '/api/v1/pipelines/run', await form({ file: await filePart(jpg), pipeline: cutout }));
    assert.equal(missing.status, 409, missing.text);
    assert.equal(missing.body.error.code, 'FEATURE_NOT_INSTALLED');
    assert.match(missing.body.error.message, /^step 2\/2 \(remove-background\): /);
    // Nothing ran: no job was recorded for the refused requests.
    const jobs = await api(s, s.token, 'GET', '/api/v1/jobs?limit=100');
    assert.ok(!jobs.body.jobs.some((j: any) => j.status === 'failed'));

    const failing = JSON.stringify({
      steps: [
        { tool: 'resize', settings: { width: 20 } },
        { tool: 'crop', settings: { left: 500, top: 0, width: 5, height: 5 } },
        { tool: 'rotate', settings: { angle: 90 } },
      ],
    });
    const failed = await api(s, s.token, 'POST', '/api/v1/pipelines/run', await form({ file: await filePart(jpg), pipeline: failing }));
    assert.equal(failed.status, 400, failed.text);
    assert.match(failed.body.error.message, /^step 2\/3 \(crop\): .*outside the image/);
  });

  it('says why a pipeline starting with a several-file or no-file step has no batch', async () => {
    const jpg = await makeImage(dir, 'nobatch.jpg', 30, 20);
    const cases = [
      { first: 'merge-pdf', steps: [{ tool: 'merge-pdf' }, { tool: 'compress-pdf' }], re: /merge-pdf takes at least 2 files in one run/ },
      {
        first: 'qr-generate',
        steps: [{ tool: 'qr-generate', settings: { data: 'x' } }, { tool: 'png-to-jpg' }],
        re: /qr-generate takes no input file/,
      },
    ];
    for (const c of cases) {
      const r = await api(
        s,
        s.token,
        'POST',
        '/api/v1/pipelines/batch',
        await form({ files: [await filePart(jpg), await filePart(jpg)], pipeline: JSON.stringify({ steps: c.steps }) }),
      );
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'VALIDATION_ERROR');
      assert.match(r.body.error.message, /cannot run as a batch/, c.first);
      assert.match(r.body.error.message, c.re);
    }
    // A first step that takes one file or more (image-to-pdf) batches: one PDF per input.
    const ok = await fetch(`${s.url}/api/v1/pipelines/batch`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({
        files: [await filePart(jpg)],
        pipeline: JSON.stringify({ steps: [{ tool: 'image-to-pdf' }, { tool: 'compress-pdf' }] }),
      }),
    });
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.deepEqual([...(await readZip(Buffer.from(await ok.arrayBuffer()))).keys()], ['nobatch-compressed.pdf', 'manifest.json']);
  });

  it('mixes an image step and a PDF step (image-to-pdf then rotate-pdf)', async () => {
    const jpg = await makeImage(dir, 'page.jpg', 60, 30);
    const pipeline = JSON.stringify({
      steps: [
        { tool: 'image-to-pdf', settings: { pageSize: 'A4' } },
        { tool: 'rotate-pdf', settings: { angle: 90 } },
      ],
    });
    const r = await api(s, s.token, 'POST', '/api/v1/pipelines/run', await form({ file: await filePart(jpg), pipeline }));
    assert.equal(r.status, 200, r.text);
    const pdf = await PDFDocument.load(await download(s, r.body.downloadUrl));
    assert.equal(pdf.getPageCount(), 1);
    assert.equal(pdf.getPage(0).getRotation().angle % 360, 90);
  });
});

describe('pipelines over HTTP, asynchronous', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ env: { SYNC_WAIT_MS: '0' } });
  });
  after(() => s.close());

  it('answers 202 and streams each step and its percent; the result lands in a library item', async () => {
    const jpg = await makeImage(dir, 'async.jpg', 80, 40);
    const up = await api(s, s.token, 'POST', '/api/v1/files', await form({ file: await filePart(jpg) }));
    assert.equal(up.status, 201, up.text);
    const run = await api(
      s,
      s.token,
      'POST',
      '/api/v1/pipelines/run',
      await form({ fileId: up.body.id, pipeline: JSON.stringify(THREE_STEPS) }),
    );
    assert.equal(run.status, 202, run.text);
    const sse = await readSse(`${s.url}/api/v1/jobs/${run.body.jobId}/progress`, s.token);
    const done = sse.events.at(-1)!;
    assert.equal(done.event, 'completed', JSON.stringify(sse.events));
    const stages = sse.events.filter((e) => e.event === 'progress').map((e) => String((e.data as any).stage));
    for (const step of ['step 1/3 (resize)', 'step 2/3 (rotate)', 'step 3/3 (convert)'])
      assert.ok(
        stages.some((x) => x.startsWith(step)),
        `${step} in ${stages.join(' | ')}`,
      );
    assert.ok(
      stages.every((x) => /^step \d\/3 \(\w+\) \d+%/.test(x) || !x.startsWith('step')),
      stages.join(' | '),
    );
    const result = (done.data as any).result ?? done.data;
    assert.equal(result.savedFileId, up.body.id);
    const item = await api(s, s.token, 'GET', `/api/v1/files/${up.body.id}`);
    assert.equal(item.body.latestVersion, 2);
    assert.equal(item.body.versions[0].tool, 'pipeline:thumbs');
    assert.equal(item.body.contentType, 'image/webp');
  });

  it('reports a failing step by name in the failed event', async () => {
    const jpg = await makeImage(dir, 'fail.jpg', 30, 30);
    const pipeline = JSON.stringify({
      steps: [
        { tool: 'resize', settings: { width: 20 } },
        { tool: 'crop', settings: { left: 100, top: 0, width: 5, height: 5 } },
      ],
    });
    const run = await api(s, s.token, 'POST', '/api/v1/pipelines/run', await form({ file: await filePart(jpg), pipeline }));
    assert.equal(run.status, 202);
    const sse = await readSse(`${s.url}/api/v1/jobs/${run.body.jobId}/progress`, s.token);
    const last = sse.events.at(-1)!;
    assert.equal(last.event, 'failed');
    assert.match(JSON.stringify(last.data), /step 2\/2 \(crop\)/);
  });
});
