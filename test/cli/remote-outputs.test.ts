/**
 * The output rule holds for runs on a server too (issue #15 items 3, 12, 13): a multi-output tool's ZIP
 * becomes separate files, `jobs download` unpacks it the same way (or keeps it with --zip), and stdin
 * to a redirected stdout works remotely.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PDFDocument } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, startServer, type TestServer } from '../helpers/server.js';

describe('outputs of runs on a server', () => {
  const dir = tempDir('kiln-remote-out-');
  let s: TestServer;
  let env: NodeJS.ProcessEnv;
  let pdf: string;
  before(async () => {
    s = await startServer();
    const key = (await api(s, s.token, 'POST', '/api/v1/api-keys', { name: 'cli' })).body.key as string;
    env = { KILN_API_KEY: key, KILN_SERVER: s.url, XDG_CONFIG_HOME: path.join(dir, 'cfg') };
    const doc = await PDFDocument.create();
    doc.addPage([100, 80]);
    doc.addPage([100, 80]);
    pdf = path.join(dir, 'both.pdf');
    writeFileSync(pdf, await doc.save());
  });
  after(() => s.close());

  it('pdf-to-image --server -o pages/ writes one image per page', async () => {
    const r = await kiln(['pdf-to-image', pdf, '-o', path.join(dir, 'pages') + '/'], { env });
    assert.equal(r.code, 0, r.stderr);
    const names = readdirSync(path.join(dir, 'pages'));
    assert.equal(names.length, 2, names.join(', '));
    for (const n of names) assert.equal((await sharp(path.join(dir, 'pages', n)).metadata()).format, 'png');
  });

  it('jobs download unpacks the same way, or keeps the ZIP with --zip', async () => {
    const queued = await kiln(['pdf-to-image', pdf, '--async'], { env });
    assert.equal(queued.code, 0, queued.stderr);
    const id = queued.stdout.trim();
    assert.equal((await kiln(['jobs', 'watch', id, '-q'], { env })).code, 0);
    const d = await kiln(['jobs', 'download', id, '-o', path.join(dir, 'dl') + '/'], { env });
    assert.equal(d.code, 0, d.stderr);
    assert.equal(readdirSync(path.join(dir, 'dl')).length, 2);
    const z = await kiln(['jobs', 'download', id, '--zip', '-o', path.join(dir, 'dlz') + '/'], { env });
    assert.equal(z.code, 0, z.stderr);
    assert.deepEqual(readdirSync(path.join(dir, 'dlz')), ['both.zip']);
  });

  it('stdin to a redirected stdout, remotely', async () => {
    const photo = await makeImage(dir, 'photo.jpg', 40, 30);
    const r = await kiln(['resize', '-', '--width', '8'], { env, cwd: dir, input: readFileSync(photo) });
    assert.equal(r.code, 0, r.stderr);
    const meta = await sharp(r.stdoutBuffer).metadata();
    assert.deepEqual([meta.format, meta.width], ['jpeg', 8]);
    assert.ok(!readdirSync(dir).some((n) => n.startsWith('stdin')), 'no ./stdin file');
  });
});
