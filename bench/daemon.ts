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
import { imageFixtures } from './image.js';
import { BENCH_PASSWORD, Bench, type BenchOptions, benchApiKey, type FamilyResult, multipart } from './lib.js';

/** Requests per second under load; a run where nothing succeeded is a failure, not a number. */
async function load(b: Bench, key: string, title: string, opts: autocannon.Options): Promise<number | undefined> {
  try {
    const r = await autocannon({ connections: 2, ...opts });
    const ok = r['2xx'];
    b.o.print(
      `  ${title.padEnd(46)} ${r.requests.average.toFixed(1).padStart(9)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  (${ok} ok, ${r.non2xx} non-2xx, ${r.errors} errors)`,
    );
    if (ok === 0) throw new Error(`no 2xx answer (${r.non2xx} non-2xx, ${r.errors} errors)`);
    b.result.ms[key] = 1000 / r.requests.average;
    return r.requests.average;
  } catch (e) {
    b.result.failures.push(`${key}: ${(e as Error).message}`);
    b.o.print(`  ${title.padEnd(46)}    FAILED  ${(e as Error).message}`);
    return undefined;
  }
}

/**
 * `inProcessMs`: the in-process resize time of the same photo (from the image family, when it ran),
 * to compare the daemon's throughput with one runTool loop. The smoke test loads only the small cases
 * for a second each.
 */
export async function benchDaemon(o: BenchOptions, inProcessMs?: number): Promise<FamilyResult> {
  const b = new Bench(o, 'daemon');
  const photo = (await imageFixtures(o)).big;
  const seconds = o.smoke ? 1 : o.n >= 10 ? 10 : 5;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-daemon-'));
  const config = { ...resolveConfig({ port: 0, dataDir }, {}), adminPassword: BENCH_PASSWORD, logger: false, syncWaitMs: 60000 };
  const app = await buildServer(config);
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address() as { port: number };
    const base = `http://127.0.0.1:${addr.port}`;
    const key = await benchApiKey(base);
    const auth = { authorization: `Bearer ${key}` };

    b.heading(
      `daemon on loopback, 2 connections, ${o.smoke ? 'a few requests' : `${seconds} s`} each, API-key auth (ms/op = 1000 / req/s)`,
    );
    const small = multipart(
      await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3366cc' } })
        .jpeg()
        .toBuffer(),
      'small.jpg',
      { width: 100 },
    );
    // Smoke: a fixed number of requests rather than a duration, so the test takes as long as they do.
    const length = (count: number, secs: number) => (o.smoke ? { amount: count } : { duration: secs });
    await load(b, 'daemon-small', 'POST resize 640x480 → 100 px', {
      url: `${base}/api/v1/tools/image/resize`,
      method: 'POST',
      ...length(4, seconds),
      headers: { ...auth, 'content-type': small.type },
      body: small.body,
    });
    await load(b, 'daemon-health', 'GET /api/v1/health', { url: `${base}/api/v1/health`, ...length(50, Math.min(seconds, 5)) });
    if (o.smoke) return b.result;
    const big = multipart(readFileSync(photo), 'photo.jpg', { width: 800 });
    const bigRps = await load(b, 'daemon-big', 'POST resize 12 MP → 800 px', {
      url: `${base}/api/v1/tools/image/resize`,
      method: 'POST',
      duration: seconds,
      headers: { ...auth, 'content-type': big.type },
      body: big.body,
    });
    if (inProcessMs && bigRps) {
      const inProcessRps = 1000 / inProcessMs;
      b.result.ratios['daemon-big-throughput/runTool-loop'] = bigRps / inProcessRps;
      b.o.print(
        `  daemon 12 MP req/s vs one in-process runTool loop: ${(bigRps / inProcessRps).toFixed(2)}x (2 connections use both cores; above 1 = more throughput)`,
      );
    }
    return b.result;
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
