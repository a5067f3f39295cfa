/**
 * The floor of the daemon's request rows: the least an HTTP resize service can do, started as its own
 * program like `kiln serve`. It takes the same multipart POST, holds the body in memory, resizes the
 * file part with sharp as kiln's resize does, keeps the output in memory and answers with a download
 * path that a GET fetches once. No accounts, jobs, database, disk or limits: what the daemon costs
 * above this is kiln's own; what this costs above sharp in process is node's HTTP on the same cores.
 *
 *   node http-floor.js   (prints `listening on http://127.0.0.1:<port>`)
 */
import { createServer } from 'node:http';
import sharp from 'sharp';

sharp.concurrency(0);
sharp.cache(false);
const outputs = new Map<string, Buffer>();
let made = 0;

/**
 * The width asked for in the settings part (`{"width":N}`), 800 when there is none. Read from the bytes
 * before the file part only: decoding the whole body to a string cost ~2.5 ms of a 6 MB upload.
 */
function width(body: Buffer): number {
  const head = body.subarray(0, Math.max(0, body.indexOf('filename=')));
  return Number(/"width":(\d+)/.exec(head.toString('latin1'))?.[1] ?? 800);
}

/** The bytes of the multipart part that carries a file name (the bench sends exactly one). */
function filePart(body: Buffer, contentType: string): Buffer {
  const boundary = /boundary=(.+)$/.exec(contentType)?.[1];
  if (!boundary) throw new Error('no multipart boundary');
  const start = body.indexOf('\r\n\r\n', body.indexOf('filename=')) + 4;
  const end = body.indexOf(`\r\n--${boundary}`, start);
  if (start < 4 || end < 0) throw new Error('no file part');
  return body.subarray(start, end);
}

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    const out = outputs.get(req.url ?? '');
    outputs.delete(req.url ?? '');
    res.writeHead(out ? 200 : 404, { 'content-type': 'image/jpeg', 'content-length': out?.length ?? 0 });
    res.end(out);
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    try {
      const body = Buffer.concat(chunks);
      const input = filePart(body, req.headers['content-type'] ?? '');
      const out = await sharp(input, { failOn: 'error' })
        .autoOrient()
        .resize({ width: width(body), fit: 'inside' })
        .jpeg({ quality: 90, progressive: false })
        .toBuffer();
      const url = `/out/${made++}`;
      outputs.set(url, out);
      const json = JSON.stringify({ downloadUrl: url });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
      res.end(json);
    } catch (e) {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(String(e));
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  console.log(`listening on http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`);
});
