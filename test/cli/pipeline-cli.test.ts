/**
 * Pipelines on the command line (issue #15 item 6): a preset reports its own output type
 * (jpg-to-pdf → rotate-pdf validates), `pipeline validate` lists every problem at once, and
 * `kiln pipeline run NAME` runs a pipeline saved on a server.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, startServer, type TestServer } from '../helpers/server.js';

describe('pipelines on the command line', () => {
  const dir = tempDir('kiln-pipecli-');
  let s: TestServer;
  let key: string;
  before(async () => {
    s = await startServer();
    key = (await api(s, s.token, 'POST', '/api/v1/api-keys', { name: 'cli' })).body.key;
  });
  after(() => s.close());

  const file = (name: string, body: unknown) => {
    const p = path.join(dir, name);
    writeFileSync(p, JSON.stringify(body));
    return p;
  };

  it('jpg-to-pdf then rotate-pdf validates and runs', async () => {
    const p = file('topdf.json', { steps: [{ tool: 'jpg-to-pdf' }, { tool: 'rotate-pdf', settings: { angle: 90 } }] });
    const v = await kiln(['pipeline', 'validate', p]);
    assert.equal(v.code, 0, v.stderr);
    const photo = await makeImage(dir, 'photo.jpg', 40, 30);
    const out = path.join(dir, 'photo.pdf');
    const r = await kiln(['pipeline', 'run', p, photo, '-o', out, '--local']);
    assert.equal(r.code, 0, r.stderr);
  });

  it('validate reports every problem, each naming its step', async () => {
    const p = file('bad.json', {
      steps: [{ tool: 'resize', settings: { width: -1 } }, { tool: 'no-such-tool' }, { tool: 'rotate-pdf', settings: { angle: 7 } }],
    });
    const v = await kiln(['pipeline', 'validate', p, '--json']);
    assert.equal(v.code, 2);
    assert.match(v.stderr, /step 1 \(resize\)/);
    assert.match(v.stderr, /step 2 \(no-such-tool\)/);
    assert.match(v.stderr, /step 3 \(rotate-pdf\)/);
    const line = JSON.parse(v.stdout) as { error: { details: unknown[] } };
    assert.equal(line.error.details.length, 3);
  });

  it('kiln pipeline run NAME runs the pipeline saved on the server', async () => {
    const env = { KILN_API_KEY: key, KILN_SERVER: '', XDG_CONFIG_HOME: path.join(dir, 'cfg') };
    const p = file('thumbs.json', { name: 'thumbs', steps: [{ tool: 'resize', settings: { width: 10 } }, { tool: 'png-to-jpg' }] });
    const saved = await kiln(['pipeline', 'save', p, '--server', s.url], { env });
    assert.equal(saved.code, 0, saved.stderr);
    const src = await makeImage(dir, 'in.png', 40, 20);
    const out = path.join(dir, 'thumb.jpg');
    const r = await kiln(['pipeline', 'run', 'thumbs', src, '-o', out, '--server', s.url], { env, cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /saved on/);
    const meta = await sharp(out).metadata();
    assert.equal(meta.format, 'jpeg');
    assert.equal(meta.width, 10);
    const missing = await kiln(['pipeline', 'run', 'nope', src, '--server', s.url], { env, cwd: dir });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /No pipeline nope/);
  });
});
