/**
 * Hostile input: the corpus of corpus.ts sent to every tool route of a real daemon process and a share
 * of it to every preset route (presetShare), two requests at a time. Every answer must be a documented
 * 4xx (or a success: a tool may cope, e.g. `info` reads a truncated PNG's header), never a 5xx or an
 * undocumented code; while it runs the health route answers fast; afterwards no temporary file is left,
 * no upload directory survives, and the daemon's RSS is back near its warm baseline.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { ERROR_TABLE } from '../../src/core/errors.js';
import { matchesAccept, sniffFile } from '../../src/core/sniff.js';
import type { AcceptToken } from '../../src/core/tool.js';
import { tempDir } from '../helpers/fixtures.js';
import { buildCorpus, type Hostile } from './corpus.js';
import { childrenOf, type DaemonProcess, filesUnder, rssOf, sampleHealth, settle, startDaemon } from './process.js';

interface Route {
  id: string;
  route: string;
  batchRoute: string | null;
  input: { kind: 'file' | 'files' | 'none'; extra?: { field: string; indexed?: boolean; required?: boolean }[] };
  settings?: { name: string; type: string; required?: boolean; enum?: unknown[]; default?: unknown; min?: number }[];
  /** Presets only: the base tool and the input types the preset takes. */
  preset?: { tool: string; accept: AcceptToken[] };
}

/**
 * Settings that get past validation, so the hostile file reaches the engine (required ones, plus the rules
 * below). images-to-video gets its shortest, slowest video: what it does with a hostile file is decided
 * when ffmpeg opens it; its defaults encoded 120 frames of 720p per request (~1 s each, 16 requests).
 */
const RULES: Record<string, Record<string, unknown>> = { resize: { width: 16 }, 'images-to-video': { secondsPerImage: 0.5, fps: 10 } };
function minimalSettings(r: Route): Record<string, unknown> {
  const out: Record<string, unknown> = { ...RULES[r.id] };
  for (const s of r.settings ?? []) {
    if (!s.required || s.name in out) continue;
    out[s.name] =
      s.enum?.[0] ??
      s.default ??
      (s.type === 'integer' || s.type === 'number'
        ? Math.max(s.min ?? 1, 1)
        : s.type === 'boolean'
          ? false
          : s.type === 'array'
            ? []
            : 'x');
  }
  return out;
}

/**
 * Weaknesses the corpus found once, answered 500 instead of a 4xx, kept apart so their test names them.
 */
const KNOWN: RegExp[] = [
  // libvips reported some truncated PNGs as "Unknown error" or a failed write of the output, now and then
  // under concurrency; runTool now checks whether the input decodes before answering an internal failure.
  /^truncated PNG → .*: 500 INTERNAL (Unknown error|vips2png: unable to write)/,
];
const isKnown = (p: string) => KNOWN.some((k) => k.test(p));

/** The warm LibreOffice profile (kiln-office-*) belongs to the running office pool, not to a request. */
const live = (files: string[]) => files.filter((f) => !/^kiln-office-[^/]+\//.test(f));

const FOUR_XX = new Set(Object.entries(ERROR_TABLE).flatMap(([code, v]) => (v.status >= 400 && v.status < 500 ? [code] : [])));

/** Runs fn over items, n at a time. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/**
 * Which (preset, file) pairs of the main corpus are sent. A preset is its base tool with some settings
 * fixed and fewer input types (src/tools/presets.ts), and the base tool's own route gets every file. What a
 * preset adds is (a) its fixed settings (another output format) applied to the files it takes, and (b) its
 * refusal of the files it does not take. (a) Every file the preset takes, by the same sniff the daemon
 * uses, goes to it. (b) That refusal is one code path for every route (requireKind, before any engine),
 * so the presets of one base tool take turns: of a family of n presets, file j goes to preset k when
 * (j + k) % min(n, 8) = 0. Each file is still refused by at least one preset of every family, each preset
 * still refuses about three files besides the warm-up share it got like every route, and a sniff that
 * wrongly let a file through would only send it to the preset's engine, never skip it. Sending all 23
 * files to all 83 presets was 1900 requests, a quarter of the run, nearly all of them 415s from requireKind.
 */
async function presetShare(routes: Route[], files: Hostile[]): Promise<Set<string>> {
  const kinds = await Promise.all(files.map((h) => sniffFile(h.data, h.name).catch(() => undefined)));
  const families = new Map<string, Route[]>();
  for (const r of routes) if (r.preset) families.set(r.preset.tool, [...(families.get(r.preset.tool) ?? []), r]);
  const share = new Set<string>();
  for (const family of families.values()) {
    const turns = Math.min(family.length, 8);
    family.forEach((r, k) => {
      files.forEach((h, j) => {
        const kind = kinds[j];
        if ((kind && matchesAccept(kind, r.preset!.accept)) || (j + k) % turns === 0) share.add(`${r.id} ${h.name}`);
      });
    });
  }
  return share;
}

/**
 * Files that reach a tool's engine as a main-corpus file does, through another demuxer or decoder: the
 * truncated MOV, MKV, AVI and WebM beside cut.mp4, the truncated AAC, Ogg and FLAC beside cut.wav and
 * cut.mp3. Every one goes to each preset that takes it (presetShare); the tool routes take turns with the
 * files of a group, route i getting file j when (i + j) % n = 0 in a group of n, so every media tool meets
 * one file of each group and every container or codec meets a share of the tools (~11 of the ~45), all of
 * them going through one runFfmpeg. Sent to every tool, the seven files took 59 of the 164 s the
 * requests spent, and the corpus phase took 67 s instead of 26 s (one run each, quiet machine).
 */
const TAKE_TURNS = [
  ['cut.mov', 'cut.mkv', 'cut.avi', 'cut.webm'],
  ['cut.aac', 'cut.ogg', 'cut.flac'],
];
const skipsTurn = (routeIndex: number, h: Hostile) =>
  TAKE_TURNS.some((g) => g.includes(h.name) && (routeIndex + g.indexOf(h.name)) % g.length !== 0);

/** The multipart body of one hostile file for one route: the main file plus every required extra file. */
function formFor(r: Route, h: Hostile): FormData {
  const f = new FormData();
  const file = () => new File([new Uint8Array(h.data)], h.name);
  if (r.input.kind === 'files') {
    f.append('files', file());
    f.append('files', file());
  } else f.append('file', file());
  for (const x of r.input.extra ?? []) if (x.required) f.append(x.indexed ? `${x.field}0` : x.field, file());
  f.append('settings', JSON.stringify(minimalSettings(r)));
  return f;
}

describe('hostile input sent to every tool route', () => {
  let d: DaemonProcess;
  let routes: Route[];
  let corpus: Hostile[];
  const problems: string[] = [];
  const leaks: string[] = [];
  let baselineRss = 0;
  let healthTimes: number[] = [];
  let sent = 0;
  /** Answers that stopped at settings validation (the file never reached an engine): reported, not failed. */
  let validationOnly = 0;
  const auth = () => ({ authorization: `Bearer ${d.token}` });

  before(async () => {
    corpus = await buildCorpus(tempDir('kiln-corpus-'));
    d = await startDaemon({ env: { SYNC_WAIT_MS: '120000', MAX_UPLOAD_MB: '16' } });
    const cat = (await (await fetch(`${d.url}/api/v1/tools`, { headers: auth() })).json()) as { tools: Route[]; presets: Route[] };
    const baseInput = new Map(cat.tools.map((t) => [t.id, t.input]));
    routes = [
      ...cat.tools,
      ...cat.presets.map((p) => {
        const { tool, accept } = p as unknown as { tool: string; accept: AcceptToken[] };
        return { ...p, input: p.input ?? baseInput.get(tool) ?? { kind: 'file' as const }, settings: [], preset: { tool, accept } };
      }),
    ];
  });
  after(async () => {
    await d?.stop();
    d?.remove();
  });

  async function send(url: string, body: FormData, label: string): Promise<void> {
    let res: Response;
    try {
      res = await fetch(d.url + url, { method: 'POST', headers: auth(), body, signal: AbortSignal.timeout(180_000) });
    } catch (e) {
      problems.push(`${label}: no answer (${(e as Error).message})`);
      return;
    }
    sent++;
    const text = await res.text();
    let j: { jobId?: string; async?: boolean; error?: { code: string; message: string } } = {};
    try {
      j = JSON.parse(text);
    } catch {
      // A batch answers with a ZIP.
    }
    if (res.status === 202 && j.jobId) {
      const job = await settle(d.url, d.token, j.jobId, 180_000);
      if (job.status === 'failed' && !FOUR_XX.has(job.error?.code ?? ''))
        problems.push(`${label}: job failed with ${job.error?.code}: ${job.error?.message}`);
      if (job.error) checkMessage(label, job.error.message);
      return;
    }
    if (res.status < 300) return;
    if (j.error?.code === 'VALIDATION_ERROR') validationOnly++;
    if (res.status >= 500 || !FOUR_XX.has(j.error?.code ?? ''))
      problems.push(`${label}: ${res.status} ${j.error?.code ?? ''} ${(j.error?.message ?? text).slice(0, 300)}`);
    if (j.error) checkMessage(label, j.error.message);
  }

  /** Error messages must not show where the daemon keeps its files (the user's file name is fine). */
  function checkMessage(label: string, message: string): void {
    for (const p of [d.dataDir, d.tmpDir, '/jobs/']) if (message.includes(p)) leaks.push(`${label}: ${message.slice(0, 300)}`);
  }

  it('every answer is a documented 4xx (or a success), health stays fast, nothing is left behind', { timeout: 1_500_000 }, async () => {
    // Warm-up: a first share of the corpus (one harmless-looking broken file per input type) to every
    // route, so every tool module, wasm decoder and engine wrapper is loaded before the baseline is taken:
    // what is left to compare is what the hostile files themselves leave behind.
    const WARM = new Set(['cut.png', 'cut.mp4', 'cut.wav', 'cut.pdf', 'noise.docx', 'absurd.srt', 'script.svg']);
    await pool(
      corpus.filter((h) => WARM.has(h.name)).flatMap((h) => routes.map((r) => [r, h] as const)),
      2,
      ([r, h]) => send(r.route, formFor(r, h), `${h.label} → ${r.route}`),
    );
    await new Promise((r) => setTimeout(r, 3000));
    baselineRss = rssOf(d.pid);
    const baselineKids = childrenOf(d.pid).length;

    const health = sampleHealth(d.url, 200);
    const t0 = Date.now();
    const work: [Route, Hostile, boolean][] = [];
    const hostile = corpus.filter((c) => !WARM.has(c.name));
    const share = await presetShare(routes, hostile);
    // The sample's promise, checked: every preset gets main-corpus files too, and every file reaches a
    // preset of every base tool.
    for (const r of routes.filter((x) => x.preset)) {
      const n = hostile.filter((h) => share.has(`${r.id} ${h.name}`)).length;
      assert.ok(n >= 2, `preset ${r.id} gets ${n} files of the main corpus`);
    }
    for (const tool of new Set(routes.flatMap((r) => (r.preset ? [r.preset.tool] : []))))
      for (const h of hostile)
        assert.ok(
          routes.some((r) => r.preset?.tool === tool && share.has(`${r.id} ${h.name}`)),
          `${h.name} goes to no preset of ${tool}`,
        );
    for (const g of TAKE_TURNS)
      for (const name of g)
        assert.ok(
          hostile.some((h) => h.name === name),
          `${name} is in the corpus`,
        );
    for (const h of hostile)
      for (const [i, r] of routes.entries()) {
        if (r.preset ? !share.has(`${r.id} ${h.name}`) : skipsTurn(i, h)) continue;
        work.push([r, h, false]);
        // Batch routes share the tool's code: each hostile file goes to a few of them.
        if (r.batchRoute && work.length % 7 === 0) work.push([r, h, true]);
      }
    await pool(work, 2, async ([r, h, batch]) => {
      const label = `${h.label} → ${batch ? r.batchRoute : r.route}`;
      if (batch) {
        const f = new FormData();
        f.append('files', new File([new Uint8Array(h.data)], h.name));
        return send(r.batchRoute!, f, label);
      }
      return send(r.route, formFor(r, h), label);
    });
    const seconds = (Date.now() - t0) / 1000;
    healthTimes = await health.stop();

    // Memory: given a moment, the allocator returns what the bombs took (see the tolerance below). The
    // daemon trims its heaps once jobs have paused for a second (system/heap-trim.ts); on a loaded 2-core
    // machine the reading right after the last answer was 1.39–1.41× the baseline, 5 s later 1.17–1.19×
    // (quiet), so the wait allows for a late trim: up to 8 s, ending as soon as the reading is under.
    let afterRss = rssOf(d.pid);
    for (const end = Date.now() + 8000; afterRss >= baselineRss * 1.5 && Date.now() < end; afterRss = rssOf(d.pid))
      await new Promise((r) => setTimeout(r, 200));
    const max = Math.max(...healthTimes);
    const p99 = [...healthTimes].sort((a, b) => a - b)[Math.floor(healthTimes.length * 0.99)]!;
    const med = [...healthTimes].sort((a, b) => a - b)[Math.floor(healthTimes.length / 2)]!;
    console.log(
      `health median ${med.toFixed(1)} ms; hostile corpus: ${corpus.length} files × ${routes.length} routes, ${sent} requests in ${seconds.toFixed(0)} s (${validationOnly} stopped at settings validation); ` +
        `health max ${max.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${healthTimes.length} samples; ` +
        `RSS ${(baselineRss / 1048576).toFixed(0)} MB → ${(afterRss / 1048576).toFixed(0)} MB; engine children ${baselineKids} → ${childrenOf(d.pid).length}`,
    );

    if (problems.length) console.log(`not a documented 4xx:\n${problems.join('\n')}`);
    const unknown = problems.filter((p) => !isKnown(p));
    assert.deepEqual(unknown, [], `${unknown.length} answers were not a documented 4xx`);
    assert.ok(d.child.exitCode === null, 'the daemon is still running');
    assert.ok(Number.isFinite(max), 'the health route always answered');
    // The machine running CI is shared (2 cores here, eight suites at once), so single samples wait for the
    // scheduler (measured: p99 61-206 ms, max 167-713 ms depending on the neighbours' load). The median
    // must be under 100 ms, and no sample may show a blocked event loop (work on it for a bomb takes seconds).
    const median = [...healthTimes].sort((a, b) => a - b)[Math.floor(healthTimes.length / 2)]!;
    assert.ok(median < 100, `health median ${median.toFixed(1)} ms`);
    assert.ok(max < 2000, `health took up to ${max.toFixed(1)} ms`);

    // No temporary file of the daemon or its engines is left (the warm LibreOffice profile lives while the daemon does).
    assert.deepEqual(live(filesUnder(d.tmpDir)), [], 'temporary files left behind');
    // No upload directory is left: what remains under jobs/ are outputs of completed jobs.
    const jobsDir = path.join(d.dataDir, 'jobs');
    for (const id of existsSync(jobsDir) ? readdirSync(jobsDir) : []) {
      assert.equal(existsSync(path.join(jobsDir, id, 'in')), false, `uploads of job ${id} left behind`);
      const job = (await (await fetch(`${d.url}/api/v1/jobs/${id}`, { headers: auth() })).json()) as { status: string };
      assert.equal(job.status, 'completed', `job directory ${id} belongs to a ${job.status} job`);
    }
    // The working directories of runs on uploads held in memory keep nothing (emptied after each answer).
    for (let i = 0; filesUnder(path.join(d.dataDir, 'run-scratch')).length > 0 && i < 50; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(filesUnder(path.join(d.dataDir, 'run-scratch')), [], 'files left in run-scratch');
    // Allocator caching (glibc arenas, libvips' operation cache, V8's grown heap) keeps part of what the
    // bombs touched; 1.5× the warm baseline is the bound the load suite uses too.
    assert.ok(afterRss < baselineRss * 1.5, `RSS ${afterRss} is more than 1.5× the warm baseline ${baselineRss}`);
  });

  it('a 31 KB PNG declaring 16000 × 16000 is refused from its header: 413 naming the limit, at once', async () => {
    const bomb = corpus.find((h) => h.name === 'bomb.png')!;
    const f = new FormData();
    f.append('file', new File([new Uint8Array(bomb.data)], bomb.name));
    f.append('settings', JSON.stringify({ width: 100 }));
    const t0 = Date.now();
    const res = await fetch(`${d.url}/api/v1/tools/image/resize`, { method: 'POST', headers: auth(), body: f });
    const j = (await res.json()) as { error?: { code: string; message: string } };
    assert.equal(res.status, 413, JSON.stringify(j));
    assert.equal(j.error?.code, 'LIMIT_EXCEEDED');
    assert.match(j.error!.message, /100000000 \(KILN_MAX_PIXELS\)/);
    assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
  });

  it('the known 500s listed in KNOWN are answered with a 4xx too', () => {
    assert.deepEqual(problems.filter(isKnown), []);
  });

  // Issue #16 item 3: runTool replaces every server path in a failure's message (src/core/scrub-paths.ts).
  it('no error message shows a server path', () => {
    if (leaks.length) console.log(`server paths in messages:\n${[...new Set(leaks)].join('\n')}`);
    assert.deepEqual(leaks, []);
  });

  it('file names with traversal and control characters are made safe', async () => {
    const png = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#00ff00' } })
      .png()
      .toBuffer();
    for (const name of [
      '../../../../etc/passwd.png',
      '..\\..\\win.png',
      'a\u0000b\u001b[2J\r\n.png',
      `${'x'.repeat(600)}.png`,
      `${'写真'.repeat(60)}.png`,
      '/abs/path.png',
    ]) {
      const f = new FormData();
      f.append('file', new File([new Uint8Array(png)], name));
      f.append('settings', JSON.stringify({ width: 10 }));
      const res = await fetch(`${d.url}/api/v1/tools/image/resize`, { method: 'POST', headers: auth(), body: f });
      const j = (await res.json()) as { jobId: string; downloadUrl: string };
      assert.equal(res.status, 200, JSON.stringify(j));
      const out = decodeURIComponent(j.downloadUrl.split('/').pop()!);
      assert.doesNotMatch(out, /[/\\\u0000-\u001f]/, `output name ${JSON.stringify(out)}`);
      assert.ok(Buffer.byteLength(out) <= 255, `output name of ${Buffer.byteLength(out)} bytes`);
      assert.match(out, /\.png$/, `${out} keeps its extension`);
      const dl = await fetch(d.url + j.downloadUrl, { headers: auth() });
      assert.equal(dl.status, 200);
      const meta = await sharp(Buffer.from(await dl.arrayBuffer())).metadata();
      assert.equal(meta.width, 10);
      // Everything the job wrote is inside its own directory (or is the file at its path: nothing to walk).
      for (const p of filesUnder(path.join(d.dataDir, 'jobs', j.jobId))) assert.doesNotMatch(p, /\.\./);
    }
    // Nothing landed outside the jobs' own directories.
    assert.deepEqual(
      filesUnder(path.join(d.dataDir, '..')).filter((p) => /passwd\.png|win\.png|path\.png/.test(p) && !/\/jobs\/[0-9a-f]+\/out\//.test(p)),
      [],
    );
  });

  async function expect413(f: FormData, what: string): Promise<void> {
    const res = await fetch(`${d.url}/api/v1/tools/image/resize`, { method: 'POST', headers: auth(), body: f });
    const j = (await res.json()) as { error?: { code: string; message: string } };
    assert.equal(res.status, 413, `${what}: ${res.status} ${JSON.stringify(j)}`);
    assert.equal(j.error?.code, 'LIMIT_EXCEEDED', what);
    assert.match(j.error!.message, /\d/, `${what}: the message names the limit`);
    // The daemon is still fine and kept nothing.
    assert.equal((await fetch(`${d.url}/api/v1/health`)).status, 200);
    assert.deepEqual(live(filesUnder(d.tmpDir)), []);
  }
  const tinyPng = async () =>
    new File(
      [
        new Uint8Array(
          await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } })
            .png()
            .toBuffer(),
        ),
      ],
      'a.png',
    );

  it('an upload over MAX_UPLOAD_MB answers 413 with the limit', async () => {
    const f = new FormData();
    f.append('file', new File([new Uint8Array(17 * 1024 * 1024)], 'big.png'));
    await expect413(f, 'a 17 MB upload with MAX_UPLOAD_MB=16');
  });

  // Issue #16 item 6: a text field over MAX_FIELD_KB (1 MB) and more than 200 fields are refused.
  it('an oversized field and too many fields answer 413 with the limit', async () => {
    let f = new FormData();
    f.append('file', await tinyPng());
    f.append('settings', `{"width": 2, "pad": "${'x'.repeat(11 * 1024 * 1024)}"}`);
    await expect413(f, 'an 11 MB settings field');
    f = new FormData();
    f.append('file', await tinyPng());
    for (let i = 0; i < 1500; i++) f.append(`f${i}`, 'x');
    await expect413(f, '1500 fields');
  });

  it('after a clean stop the daemon leaves no temporary file at all', async () => {
    await d.stop();
    // Compiled code kept for the next start is a cache, not a leftover: node ≥ 22 keeps its own under
    // node-compile-cache/, and src/core/code-cache.ts kiln's vendor.cjs under node-compile-cache/kiln/.
    const cache = /^node-compile-cache\//;
    assert.deepEqual(
      filesUnder(d.tmpDir).filter((f) => !cache.test(f)),
      [],
    );
    assert.deepEqual(
      filesUnder(d.tmpDir).filter((f) => /^node-compile-cache\/kiln\//.test(f) && !/\/vendor\.cjs-[0-9a-f]{16}\.v8$/.test(f)),
      [],
      'a half-written cache file was left',
    );
  });
});
