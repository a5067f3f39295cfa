/** GET /metrics: Prometheus text that parses, with requests, jobs and queue figures; admins or the metrics token only. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, login, startServer, type TestServer } from '../helpers/server.js';

/** A strict reader of the text exposition format: every line a comment, blank, or `name{labels} value`. */
function parsePrometheus(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* /.test(line)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)(?: \d+)?$/.exec(line);
    assert.ok(m, `not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

describe('GET /metrics', () => {
  let s: TestServer;
  const dir = tempDir('kiln-metrics-');
  before(async () => {
    s = await startServer({ env: { METRICS_TOKEN: 'scrape-secret-0123456789' } });
  });
  after(() => s.close());

  it('counts requests and jobs, shows the queue, and parses as Prometheus text', async () => {
    const img = await makeImage(dir, 'm.png', 60, 30);
    const run = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/resize',
      await form({ file: await filePart(img), settings: '{"width": 10}' }),
    );
    assert.equal(run.status, 200);
    const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.token}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const samples = parsePrometheus(await res.text());
    const find = (name: string, labels: Record<string, string>) =>
      samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
    assert.equal(find('kiln_http_requests_total', { route: '/api/v1/tools/image/resize', status: '200', method: 'POST' })?.value, 1);
    assert.equal(find('kiln_jobs_total', { tool: 'resize', status: 'completed' })?.value, 1);
    assert.equal(find('kiln_job_duration_seconds_count', { tool: 'resize' })?.value, 1);
    assert.ok(find('kiln_queue_jobs', { state: 'running' }));
    assert.ok(find('process_resident_memory_bytes', {}));
  });

  it('is for admins or the metrics token only', async () => {
    assert.equal((await fetch(`${s.url}/metrics`)).status, 401);
    assert.equal((await fetch(`${s.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-of-some-length' } })).status, 401);
    assert.equal((await fetch(`${s.url}/metrics`, { headers: { authorization: 'Bearer scrape-secret-0123456789' } })).status, 200);
    await api(s, s.token, 'POST', '/api/auth/register', { username: 'metric-user', password: 'Correct-Horse-42', role: 'user' });
    const user = await login(s.url, 'metric-user', 'Correct-Horse-42');
    assert.equal((await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${user}` } })).status, 403);
  });
});
