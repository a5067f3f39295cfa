/**
 * PostScript is a program: the daemon refuses EPS/PS uploads before Ghostscript sees them, unless an
 * administrator allows them; the local CLI keeps reading the user's own EPS files.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import sharp from 'sharp';
import { kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';

/** A tiny EPS that would read a server file if it were run (Ghostscript's SAFER stops it; we never get that far). */
const EPS = `%!PS-Adobe-3.0 EPSF-3.0
%%BoundingBox: 0 0 40 40
(/etc/passwd) (r) file pop
0 0 1 setrgbcolor 0 0 40 40 rectfill
showpage
`;
const PLAIN_EPS = `%!PS-Adobe-3.0 EPSF-3.0
%%BoundingBox: 0 0 40 40
1 0 0 setrgbcolor 0 0 40 40 rectfill
showpage
`;

describe('PostScript input', () => {
  const dir = tempDir('kiln-ps-');
  const servers: TestServer[] = [];
  after(() => Promise.all(servers.map((s) => s.close())));

  const send = async (s: TestServer, route: string, file: string) => {
    const res = await fetch(`${s.url}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: await form({ file: await filePart(file), settings: route.endsWith('/resize') ? '{"width": 20}' : '{}' }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('is refused by the daemon by default, on tool, preset and batch routes', async () => {
    const s = await startServer();
    servers.push(s);
    const eps = path.join(dir, 'evil.eps');
    await writeFile(eps, EPS);
    for (const route of ['/api/v1/tools/image/resize', '/api/v1/tools/image/eps-to-png']) {
      const r = await send(s, route, eps);
      assert.equal(r.status, 415, `${route}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.reason, 'postscript-disabled');
    }
    // Renamed as a PNG it is still PostScript: the bytes decide.
    const disguised = path.join(dir, 'photo.png');
    await writeFile(disguised, EPS);
    assert.equal((await send(s, '/api/v1/tools/image/resize', disguised)).body.error.reason, 'postscript-disabled');
    const batch = await fetch(`${s.url}/api/v1/tools/image/resize/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: await form({ files: [await filePart(eps)], settings: '{"width": 20}' }),
    });
    // Its only input refused from its bytes: the batch is answered 415 before any job.
    assert.equal(batch.status, 415);
    assert.equal(((await batch.json()) as any).error.reason, 'postscript-disabled');
  });

  it('is read when an administrator allows it, and by the local CLI', async () => {
    const eps = path.join(dir, 'red.eps');
    await writeFile(eps, PLAIN_EPS);
    const s = await startServer({ env: { ALLOW_POSTSCRIPT: 'true' } });
    servers.push(s);
    const r = await send(s, '/api/v1/tools/image/eps-to-png', eps);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const out = path.join(dir, 'red.png');
    const cli = await kiln(['eps-to-png', eps, '-o', out]);
    assert.equal(cli.code, 0, cli.stderr);
    const { data } = await sharp(out).raw().toBuffer({ resolveWithObject: true });
    assert.ok(data[0]! > 200 && data[1]! < 100 && data[2]! < 100, 'the EPS was rendered red');
  });
});
