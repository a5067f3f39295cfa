/**
 * The daemon under load, on loopback only: autocannon with 2 connections against a real server.
 *   - resize of the 12 MP JPEG (the work itself dominates: compared with the in-process time per op),
 *   - resize of a small image (what the HTTP path, auth with an API key, the job record and download add),
 *   - GET /api/v1/health (the framework floor).
 */
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import sharp from 'sharp';
import { resolveConfig } from '../daemon/config.js';
import { buildServer } from '../daemon/server.js';

function multipart(file: Buffer, name: string, settings: object): { body: Buffer; type: string } {
  const boundary = '----kilnbench' + Math.random().toString(16).slice(2);
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="settings"\r\n\r\n${JSON.stringify(settings)}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: image/jpeg\r\n\r\n`,
  );
  return { body: Buffer.concat([head, file, Buffer.from(`\r\n--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

async function load(title: string, opts: autocannon.Options): Promise<number> {
  const r = await autocannon({ connections: 2, ...opts });
  const ok = r['2xx'];
  process.stdout.write(`  ${title.padEnd(34)} ${r.requests.average.toFixed(1).padStart(8)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  (${ok} ok, ${r.non2xx} non-2xx, ${r.errors} errors)\n`);
  return r.requests.average;
}

export async function benchDaemon(photo: string, seconds: number, inProcessMs: number | undefined): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-daemon-'));
  const config = { ...resolveConfig({ port: 0, dataDir }, {}), adminPassword: 'bench-admin-password-1', logger: false, syncWaitMs: 60000 };
  const app = await buildServer(config);
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address() as { port: number };
    const base = `http://127.0.0.1:${addr.port}`;
    const login = (await (await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'bench-admin-password-1' }) })).json()) as { token: string };
    const key = (await (await fetch(`${base}/api/v1/api-keys`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${login.token}` }, body: JSON.stringify({ name: 'bench' }) })).json()) as { key: string };
    const auth = { authorization: `Bearer ${key.key}` };

    process.stdout.write(`\ndaemon on loopback, 2 connections, ${seconds} s each, API-key auth:\n`);
    const big = multipart(readFileSync(photo), 'photo.jpg', { width: 800 });
    const bigRps = await load('POST resize 12 MP → 800 px', { url: `${base}/api/v1/tools/image/resize`, method: 'POST', duration: seconds, headers: { ...auth, 'content-type': big.type }, body: big.body });
    const small = multipart(await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3366cc' } }).jpeg().toBuffer(), 'small.jpg', { width: 100 });
    await load('POST resize 640x480 → 100 px', { url: `${base}/api/v1/tools/image/resize`, method: 'POST', duration: seconds, headers: { ...auth, 'content-type': small.type }, body: small.body });
    await load('GET /api/v1/health', { url: `${base}/api/v1/health`, duration: Math.min(seconds, 5) });
    if (inProcessMs) {
      const inProcessRps = 1000 / inProcessMs;
      process.stdout.write(`  daemon 12 MP req/s vs one in-process runTool loop: ${(bigRps / inProcessRps).toFixed(2)}x (2 connections use both cores)\n`);
    }
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
