/**
 * The remote CLI treats every name and URL a server sends as hostile (issue #21 item 2): a fake kiln
 * server (node:http) answers with `..%2F..%2Fpwned.txt` download URLs, `../../x` output names and links
 * to another origin; a second server on that other origin records whether the API key reached it.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';

const KEY = 'kiln_test_secret_key';

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })),
  );
}

describe('the remote CLI does not trust the server', () => {
  const root = tempDir('kiln-hostile-');
  // The run happens two levels down, so `../../` would land inside root where it can be seen.
  const cwd = path.join(root, 'a', 'b');
  let hostile: { server: Server; url: string };
  let other: { server: Server; url: string };
  const otherSaw: { auth: string | undefined; url: string }[] = [];
  let photo: string;

  const json = (res: ServerResponse, body: unknown, status = 200) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const job = (id: string, outputName: string, downloadUrl: string) => ({
    jobId: id,
    tool: 'resize',
    status: 'completed',
    progress: { percent: 100, stage: null },
    result: { downloadUrl },
    error: null,
    outputName,
    createdAt: null,
    finishedAt: null,
  });

  before(async () => {
    mkdirSync(cwd, { recursive: true });
    photo = await makeImage(cwd, 'photo.png', 20, 20);
    other = await listen((req, res) => {
      otherSaw.push({ auth: req.headers.authorization, url: req.url ?? '' });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('stolen');
    });
    hostile = await listen((req, res) => {
      req.resume();
      const u = req.url ?? '';
      if (req.method === 'POST' && u === '/api/v1/tools/image/resize')
        return json(res, { jobId: 'j1', downloadUrl: '/api/v1/download/j1/..%2F..%2Fpwned.txt', originalSize: 1, processedSize: 5 });
      if (u.startsWith('/api/v1/download/')) return res.writeHead(200, { 'content-type': 'text/plain' }).end('bytes');
      if (u === '/api/v1/download-redirect') return res.writeHead(302, { location: `${other.url}/redirected` }).end();
      if (u === '/api/v1/jobs/j2') return json(res, job('j2', '../../x', `${other.url}/steal`));
      if (u === '/api/v1/jobs/j3') return json(res, job('j3', '../../x', '/api/v1/download/j3/..%2F..%2Fy'));
      if (u === '/api/v1/jobs/j4') return json(res, job('j4', 'r.txt', '/api/v1/download-redirect'));
      const versions = [
        {
          version: 1,
          name: '../../evil.txt',
          size: 5,
          contentType: 'text/plain',
          sha256: '',
          createdBy: 'u',
          createdAt: '',
          source: 'upload',
          tool: null,
          settings: null,
          restoredFrom: null,
        },
      ];
      if (u === '/api/v1/files/f1/versions') return json(res, { versions });
      // The download is named after the item (its name as renamed): hostile there too.
      if (u === '/api/v1/files/f1') return json(res, { id: 'f1', name: '../../evil.txt', versions });
      if (u.startsWith('/api/v1/files/f1/download')) return res.writeHead(200, { 'content-type': 'text/plain' }).end('item');
      // A connection that drops after 5000 of the 100000 bytes it announced.
      if (u === '/api/v1/files/f2') return json(res, { id: 'f2', name: 'big.bin', versions: [{ ...versions[0], name: 'big.bin' }] });
      if (u === '/api/v1/jobs/j5') return json(res, job('j5', 'big.bin', '/api/v1/drop/big.bin'));
      if (u.startsWith('/api/v1/files/f2/download') || u === '/api/v1/drop/big.bin') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 100000 }).write(Buffer.alloc(5000, 1));
        setTimeout(() => res.socket?.destroy(), 50);
        return;
      }
      json(res, { error: { code: 'NOT_FOUND', message: `no ${u}` } }, 404);
    });
  });
  after(() => {
    hostile.server.close();
    other.server.close();
  });

  const env = () => ({ XDG_CONFIG_HOME: path.join(root, 'cfg'), KILN_API_KEY: KEY, KILN_SERVER: '' });
  const nothingOutside = () => {
    for (const up of [root, path.join(root, 'a')])
      for (const n of ['pwned.txt', 'x', 'y', 'evil.txt']) assert.equal(existsSync(path.join(up, n)), false, `${n} written above the run`);
  };

  it('a tool run keeps a ..%2F download name inside -o DIR/', async () => {
    const r = await kiln(['resize', photo, '--width', '5', '-o', 'out/', '--server', hostile.url], { cwd, env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(path.join(cwd, 'out')), ['pwned.txt']);
    nothingOutside();
  });

  it('jobs download: a ../../x output name stays in the directory; a link to another origin is refused and gets no key', async () => {
    const ok = await kiln(['jobs', 'download', 'j3', '-o', 'dl/', '--server', hostile.url], { cwd, env: env() });
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(readdirSync(path.join(cwd, 'dl')), ['x']);
    assert.equal(readFileSync(path.join(cwd, 'dl', 'x'), 'utf8'), 'bytes');
    const stolen = await kiln(['jobs', 'download', 'j2', '-o', 'dl2/', '--server', hostile.url, '--json'], { cwd, env: env() });
    assert.equal(stolen.code, 1);
    assert.equal((JSON.parse(stolen.stdout) as { error: { code: string } }).error.code, 'FORBIDDEN');
    const redirected = await kiln(['jobs', 'download', 'j4', '-o', 'dl3/', '--server', hostile.url], { cwd, env: env() });
    assert.equal(redirected.code, 1);
    assert.match(redirected.stderr, /another origin/);
    assert.deepEqual(otherSaw, [], 'the other origin was never contacted');
    nothingOutside();
  });

  it('files get: a ../../evil.txt item name is written as got/evil.txt (got/ created)', async () => {
    const r = await kiln(['files', 'get', 'f1', '-o', 'got/', '--server', hostile.url], { cwd, env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(path.join(cwd, 'got', 'evil.txt'), 'utf8'), 'item');
    const def = await kiln(['files', 'get', 'f1', '--server', hostile.url], { cwd, env: env() });
    assert.equal(def.code, 0, def.stderr);
    assert.equal(readFileSync(path.join(cwd, 'evil.txt'), 'utf8'), 'item');
    nothingOutside();
  });

  it('a download cut off mid-body is UNAVAILABLE (exit 1) saying how much came, and leaves no file at -o', async () => {
    for (const args of [
      ['files', 'get', 'f2', '-o', 'cut/'],
      ['jobs', 'download', 'j5', '-o', 'cut/'],
    ]) {
      const r = await kiln([...args, '--server', hostile.url, '--json'], { cwd, env: env() });
      assert.equal(r.code, 1, r.stderr);
      const err = (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { error: { code: string; message: string } }).error;
      assert.equal(err.code, 'UNAVAILABLE', err.message);
      // The count is what the CLI had read when the error came: on a loaded machine undici may drop the
      // chunks it still held when the socket closed (seen: 0 of 100000), so any count up to what was sent.
      const got = /dropped during the download \((\d+) of 100000 bytes/.exec(err.message);
      assert.ok(got && Number(got[1]) <= 5000, err.message);
      assert.deepEqual(existsSync(path.join(cwd, 'cut')) ? readdirSync(path.join(cwd, 'cut')) : [], []);
    }
  });

  it("an answer that is not a kiln server's (a sign-in page, `{}`) is UNAVAILABLE saying so, not INTERNAL or a silent ok", async () => {
    // A proxy's sign-in page for every GET; `{}` (no job id) for a run.
    const sso = await listen((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.method === 'POST') return json(res, {});
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Sign in to Corp SSO</body></html>');
      });
    });
    try {
      for (const args of [
        ['files', 'list'],
        ['jobs', 'list'],
        ['resize', photo, '--width', '5', '-o', 'sso.png'],
      ]) {
        const r = await kiln([...args, '--server', sso.url, '--json'], { cwd, env: env() });
        assert.equal(r.code, 1, `${args[0]}: ${r.stderr}`);
        const err = (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { error: { code: string; message: string } }).error;
        assert.equal(err.code, 'UNAVAILABLE', err.message);
        assert.match(
          err.message,
          args[0] === 'resize' ? /without a job id/ : /answered HTTP 200 with text\/html .*not the JSON of a kiln server/,
        );
      }
      assert.equal(existsSync(path.join(cwd, 'sso.png')), false);
    } finally {
      sso.server.close();
    }
  });

  it("a reverse proxy's 502 page (the daemon behind it is down) is UNAVAILABLE, as a 503 is, not INTERNAL", async () => {
    const proxy = await listen((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>502 Bad Gateway</body></html>'));
    });
    try {
      const r = await kiln(['resize', photo, '--width', '5', '-o', 'proxy.png', '--server', proxy.url, '--json'], { cwd, env: env() });
      assert.equal(r.code, 1, r.stderr);
      const err = (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { error: { code: string; message: string } }).error;
      assert.equal(err.code, 'UNAVAILABLE', err.message);
      assert.match(err.message, /HTTP 502/);
      assert.equal(existsSync(path.join(cwd, 'proxy.png')), false);
    } finally {
      proxy.server.close();
    }
  });
});
