/**
 * Throughput of a kiln deployment behind a load balancer (docs/SCALING.md): submits `--jobs` runs of
 * one tool at once (Prefer: respond-async), follows them through the balancer until every one has
 * ended, and prints jobs per minute and which instance ran how many.
 *
 *   node dist/scripts/scale-throughput.js --url http://127.0.0.1:8080 --password … --file in.mp4 \
 *     --route /api/v1/tools/video/compress-video --settings '{"quality":"strong"}' --jobs 12
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    user: { type: 'string', default: 'admin' },
    password: { type: 'string' },
    file: { type: 'string' },
    route: { type: 'string', default: '/api/v1/tools/video/compress-video' },
    settings: { type: 'string', default: '{}' },
    jobs: { type: 'string', default: '12' },
  },
});
if (!o.password || !o.file) throw new Error('give --password and --file');

const login = await fetch(`${o.url}/api/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ username: o.user, password: o.password }),
});
if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
const headers = { authorization: `Bearer ${((await login.json()) as { token: string }).token}` };
const bytes = await readFile(o.file);
const n = Number(o.jobs);

const t0 = Date.now();
const ids = await Promise.all(
  Array.from({ length: n }, async () => {
    const fd = new FormData();
    fd.set('file', new Blob([bytes]), path.basename(o.file!));
    fd.set('settings', o.settings!);
    const r = await fetch(o.url + o.route, { method: 'POST', headers: { ...headers, prefer: 'respond-async' }, body: fd });
    if (r.status !== 202 && r.status !== 200) throw new Error(`submit: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { jobId: string }).jobId;
  }),
);
const ended = new Map<string, { status: string; ms: number }>();
while (ended.size < n) {
  for (const id of ids) {
    if (ended.has(id)) continue;
    const j = (await (await fetch(`${o.url}/api/v1/jobs/${id}`, { headers })).json()) as { status: string };
    if (!['queued', 'running'].includes(j.status)) ended.set(id, { status: j.status, ms: Date.now() - t0 });
  }
  await new Promise((r) => setTimeout(r, 200));
}
const s = (Date.now() - t0) / 1000;
const failed = [...ended.values()].filter((e) => e.status !== 'completed').length;
process.stdout.write(`${n} jobs in ${s.toFixed(1)} s: ${((n / s) * 60).toFixed(1)} jobs/min (${failed} not completed)\n`);
