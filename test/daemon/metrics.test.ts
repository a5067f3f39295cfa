/**
 * GET /metrics: Prometheus text that a strict reader of the exposition format accepts, with requests by
 * route and status, jobs by tool and outcome, queue depth, job duration histograms and engine pool
 * sizes; admins or the metrics token only.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { makeVideo } from '../helpers/media.js';
import { api, filePart, form, login, startServer, type TestServer } from '../helpers/server.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Reads `{a="x",b="y\"z"}` exactly (escapes \\, \" and \n); anything else in the braces fails. */
function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(text.slice(i));
    assert.ok(m, `bad label at "${text.slice(i)}" in: ${line}`);
    i += m[0].length;
    let value = '';
    for (;;) {
      assert.ok(i < text.length, `unterminated label value in: ${line}`);
      const c = text[i++]!;
      if (c === '"') break;
      if (c === '\\') {
        const e = text[i++];
        assert.ok(e === '\\' || e === '"' || e === 'n', `bad escape \\${e} in: ${line}`);
        value += e === 'n' ? '\n' : e;
      } else value += c;
    }
    assert.ok(!(m[1]! in labels), `label ${m[1]} twice in: ${line}`);
    labels[m[1]!] = value;
    if (text[i] === ',') i++;
    else assert.equal(i, text.length, `expected , or } after a label in: ${line}`);
  }
  return labels;
}

/**
 * A strict reader of the text exposition format 0.0.4: HELP/TYPE comments, one TYPE per family before its
 * samples, each sample of a declared family (histograms: _bucket/_sum/_count), no series twice, numbers
 * that parse, and histograms whose buckets grow with `le` up to `+Inf` = `_count`.
 */
function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string> } {
  assert.ok(text.endsWith('\n'), 'ends with a newline');
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const seen = new Set<string>();
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
      if (!m) continue; // other comments are allowed
      assert.match(m[2]!, NAME, line);
      if (m[1] === 'TYPE') {
        assert.ok(TYPES.has(m[3]!), `unknown type: ${line}`);
        assert.ok(!types.has(m[2]!), `TYPE twice: ${line}`);
        assert.ok(!samples.some((s) => s.name.startsWith(m[2]!)), `TYPE after samples: ${line}`);
        types.set(m[2]!, m[3]!);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const [, name, labelText, raw] = m as unknown as [string, string, string | undefined, string];
    const value = raw === '+Inf' ? Number.POSITIVE_INFINITY : raw === '-Inf' ? Number.NEGATIVE_INFINITY : Number(raw);
    assert.ok(raw === 'NaN' || !Number.isNaN(value), `not a number: ${line}`);
    const family = types.has(name)
      ? name
      : [...types.keys()].find(
          (f) => types.get(f) === 'histogram' && /^_(bucket|sum|count)$/.test(name.slice(f.length)) && name.startsWith(f),
        );
    assert.ok(family, `a sample of no declared family: ${line}`);
    const labels = parseLabels(labelText ?? '', line);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    assert.ok(!seen.has(key), `series twice: ${line}`);
    seen.add(key);
    samples.push({ name, labels, value });
  }
  for (const [family, type] of types) {
    if (type !== 'histogram') continue;
    const series = new Map<string, { le: number; value: number }[]>();
    for (const s of samples.filter((x) => x.name === `${family}_bucket`)) {
      const { le, ...rest } = s.labels;
      assert.ok(le !== undefined, `${family}_bucket without le`);
      const key = JSON.stringify(Object.entries(rest).sort());
      series.set(key, [...(series.get(key) ?? []), { le: le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), value: s.value }]);
    }
    for (const [key, buckets] of series) {
      buckets.sort((a, b) => a.le - b.le);
      for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]!.value >= buckets[i - 1]!.value, `${family}${key}: buckets grow`);
      assert.equal(buckets.at(-1)!.le, Number.POSITIVE_INFINITY, `${family}${key}: a +Inf bucket`);
      const count = samples.find((x) => x.name === `${family}_count` && JSON.stringify(Object.entries(x.labels).sort()) === key);
      assert.equal(count?.value, buckets.at(-1)!.value, `${family}${key}: +Inf bucket = _count`);
    }
  }
  return { samples, types };
}

describe('GET /metrics', () => {
  let s: TestServer;
  const dir = tempDir('kiln-metrics-');
  before(async () => {
    s = await startServer({ env: { METRICS_TOKEN: 'scrape-secret-0123456789' } });
  });
  after(() => s.close());

  it('the strict reader refuses what is not the exposition format', () => {
    const bad = [
      'kiln_x 1\n', // no TYPE
      '# TYPE kiln_x counter\nkiln_x{a="1" 1\n',
      '# TYPE kiln_x counter\nkiln_x{a="1",a="2"} 1\n',
      '# TYPE kiln_x counter\nkiln_x one\n',
      '# TYPE kiln_x counter\nkiln_x 1\nkiln_x 2\n',
      '# TYPE kiln_h histogram\nkiln_h_bucket{le="1"} 2\nkiln_h_bucket{le="+Inf"} 1\nkiln_h_count 1\n',
      '# TYPE kiln_h histogram\nkiln_h_bucket{le="1"} 1\nkiln_h_bucket{le="+Inf"} 1\nkiln_h_count 2\n',
    ];
    for (const text of bad) assert.throws(() => parsePrometheus(text), assert.AssertionError, text);
    assert.equal(parsePrometheus('# TYPE kiln_x gauge\nkiln_x{a="q\\"\\\\"} 1.5e3\n').samples[0]!.labels.a, 'q"\\');
  });

  it('counts requests by route and status and jobs by tool and outcome; queue, durations and engine pools', async () => {
    const img = await makeImage(dir, 'm.png', 60, 30);
    const run = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/resize',
      await form({ file: await filePart(img), settings: '{"width": 10}' }),
    );
    assert.equal(run.status, 200, run.text);
    // A job that fails: a PNG signature and then nothing a decoder can read.
    const broken = path.join(dir, 'broken.png');
    await writeFile(broken, Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(64, 7)]));
    const failed = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/resize',
      await form({ file: await filePart(broken), settings: '{"width": 10}' }),
    );
    assert.ok(failed.status >= 400 && failed.status < 500, `${failed.status} ${failed.text}`);
    // An office conversion starts a LibreOffice instance: the pool gauge shows it.
    const rtf = path.join(dir, 'm.rtf');
    await writeFile(rtf, '{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Helvetica;}}\\f0 metrics\\par}');
    const office = await api(s, s.token, 'POST', '/api/v1/tools/files/wordprocessor-to-pdf', await form({ file: await filePart(rtf) }));
    assert.equal(office.status, 200, office.text);
    assert.equal((await api(s, s.token, 'GET', '/api/v1/jobs/no-such-job')).status, 404);
    // A batch streams its ZIP outside the queue: it counts too, as kind batch, once the ZIP has come.
    const batch = await fetch(`${s.url}/api/v1/tools/image/rotate/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: await form({ files: [await filePart(img), await filePart(img)], settings: '{"angle": 90}' }),
    });
    assert.equal(batch.status, 200);
    assert.ok((await batch.arrayBuffer()).byteLength > 100);
    const scrape = async () => {
      const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.token}` } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      return parsePrometheus(await res.text());
    };
    // While a transcode runs, the queue gauge counts it.
    const clip = makeVideo(dir, 'q.mp4', { width: 640, height: 360, durationS: 6, audio: false });
    const queued = await fetch(`${s.url}/api/v1/tools/video/compress-video`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, prefer: 'respond-async' },
      body: await form({ file: await filePart(clip), settings: '{"quality": "strong"}' }),
    });
    assert.equal(queued.status, 202);
    const { jobId } = (await queued.json()) as { jobId: string };
    const busy = (await scrape()).samples.filter((x) => x.name === 'kiln_queue_jobs').reduce((a, x) => a + x.value, 0);
    assert.equal(busy, 1, 'the transcode is queued or running');
    for (let i = 0; i < 1200; i++) {
      if ((await api(s, s.token, 'GET', `/api/v1/jobs/${jobId}`)).body.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The row says completed a moment before the queue lets the run go (its inputs are removed in
    // between): on a loaded machine a scrape can fall in that gap, so wait for the queue to drain.
    const queueJobs = (x: Awaited<ReturnType<typeof scrape>>) =>
      x.samples.filter((y) => y.name === 'kiln_queue_jobs').reduce((a, y) => a + y.value, 0);
    for (let i = 0; i < 100 && queueJobs(await scrape()) > 0; i++) await new Promise((r) => setTimeout(r, 100));

    const { samples, types } = await scrape();
    const find = (name: string, labels: Record<string, string>) =>
      samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
    const one = (name: string, labels: Record<string, string>) => {
      const found = find(name, labels);
      assert.equal(found.length, 1, `${name}${JSON.stringify(labels)}: ${found.length} series`);
      return found[0]!.value;
    };

    assert.equal(types.get('kiln_http_requests_total'), 'counter');
    assert.equal(one('kiln_http_requests_total', { method: 'POST', route: '/api/v1/tools/image/resize', status: '200' }), 1);
    assert.equal(
      one('kiln_http_requests_total', { method: 'POST', route: '/api/v1/tools/image/resize', status: String(failed.status) }),
      1,
    );
    assert.equal(one('kiln_http_requests_total', { method: 'GET', route: '/api/v1/jobs/:jobId', status: '404' }), 1);
    assert.equal(types.get('kiln_http_request_duration_seconds'), 'histogram');
    assert.equal(one('kiln_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/tools/image/resize' }), 2);

    assert.equal(types.get('kiln_jobs_total'), 'counter');
    assert.equal(one('kiln_jobs_total', { tool: 'resize', status: 'completed' }), 1);
    assert.equal(one('kiln_jobs_total', { tool: 'resize', status: 'failed' }), 1);
    assert.equal(one('kiln_jobs_total', { tool: 'wordprocessor-to-pdf', status: 'completed' }), 1);
    assert.equal(one('kiln_jobs_total', { tool: 'compress-video', status: 'completed' }), 1);
    assert.equal(one('kiln_jobs_total', { tool: 'rotate', kind: 'batch', status: 'completed' }), 1);
    assert.equal(types.get('kiln_job_duration_seconds'), 'histogram');
    assert.equal(one('kiln_job_duration_seconds_count', { tool: 'resize', status: 'completed' }), 1);
    assert.ok(one('kiln_job_duration_seconds_sum', { tool: 'resize', status: 'completed' }) > 0);
    assert.ok(find('kiln_job_duration_seconds_bucket', { tool: 'resize', status: 'completed' }).length > 5, 'buckets');

    assert.equal(types.get('kiln_queue_jobs'), 'gauge');
    assert.equal(one('kiln_queue_jobs', { state: 'running' }), 0);
    assert.equal(one('kiln_queue_jobs', { state: 'queued' }), 0);
    assert.equal(types.get('kiln_engine_pool_processes'), 'gauge');
    assert.equal(one('kiln_engine_pool_processes', { engine: 'libreoffice' }), 1);
    assert.ok(one('process_resident_memory_bytes', {}) > 10 * 1024 * 1024);
  });

  it('is for admins or the metrics token only', async () => {
    assert.equal((await fetch(`${s.url}/metrics`)).status, 401);
    assert.equal((await fetch(`${s.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-of-some-length' } })).status, 401);
    assert.equal((await fetch(`${s.url}/metrics`, { headers: { authorization: 'Bearer scrape-secret-0123456789' } })).status, 200);
    // As many characters as the token but more bytes (a Latin-1 header byte is two in UTF-8): 401, not 500.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.get(`${s.url}/metrics`, { headers: { authorization: 'Bearer scrape-secret-012345678\u00e9' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
    assert.equal(status, 401);
    await api(s, s.token, 'POST', '/api/auth/register', { username: 'metric-user', password: 'Correct-Horse-42', role: 'user' });
    const user = await login(s.url, 'metric-user', 'Correct-Horse-42');
    assert.equal((await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${user}` } })).status, 403);
  });
});
