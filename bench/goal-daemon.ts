/**
 * The goal rows of the daemon, against a real `kiln serve` process: idle memory, the cost of one small
 * request, resize throughput against sharp in this process, memory after a run of mixed requests, and
 * the engines it starts on first use (LibreOffice, Chromium) with their stop after the idle time.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { makeDocx, makeMarkdown } from './docs.js';
import { type Row, interleave, median, ms, row } from './goals.js';
import { dir, have, multipart, requireOutput, shAsync, type BenchOptions } from './lib.js';
import { mixedImageRequests, postTool, runMix } from './memory.js';
import { type ServeProcess, settledRssMb } from './serve-process.js';

const mb = (x: number) => `${x.toFixed(0)} MB`;
const childrenTotal = (s: ServeProcess) => Object.values(s.childrenMb()).reduce((a, b) => a + b, 0);

/** Idle daemon (settled, see settledRssMb) plus whatever engine processes it has (none, by design). */
export async function idleRow(s: ServeProcess, settleS: number): Promise<{ row: Row; idleMb: number }> {
  let idleMb = 0;
  const r = await row('daemon idle RSS (with engine processes)', async () => {
    idleMb = await settledRssMb(s, settleS);
    const engines = childrenTotal(s);
    return {
      kiln: `${mb(idleMb + engines)} (engines ${mb(engines)})`,
      reference: '—',
      value: idleMb + engines,
      goal: { on: 'kiln', op: '<=', target: 100, unit: 'MB' },
    };
  });
  return { row: r, idleMb };
}

/**
 * One small resize (64×64 JPEG) over HTTP against GET /api/v1/jobs, sequential, interleaved; beside
 * them sharp alone and the same POST to the least HTTP resize service (bench/http-floor.ts), sent by
 * the same client: what node's HTTP and multipart cost on these cores before any of kiln's work.
 */
export async function latencyRow(s: ServeProcess, rounds: number): Promise<Row> {
  return row('one daemon request, 64×64 image', async () => {
    const file = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3366cc' } })
      .jpeg()
      .toBuffer();
    // One multipart body made once, sent by plain node:http (as the throughput row does): a FormData
    // and fetch() per request cost the client 1.4–1.8 ms of each 8–10 ms reading on a slow machine,
    // time that is the bench's, not the daemon's. All three HTTP sides use the same client.
    const m = multipart(file, 'tiny.jpg', { width: 32 });
    const post = async (url: string, auth: Record<string, string>) => {
      const r = await httpCall(url, 'POST', { ...auth, 'content-type': m.type }, m.body);
      if (r.status !== 200) throw new Error(`${url}: HTTP ${r.status} ${r.body.toString().slice(0, 200)}`);
    };
    // The resize itself, by sharp in this process writing a file as the job does: the part of the
    // request no HTTP or bookkeeping work can take away. Without libvips' operation cache, as the daemon
    // runs it (src/engines/sharp.ts): the same small input again would be a cache hit.
    sharp.cache(false);
    const alone = path.join(os.tmpdir(), `kiln-bench-tiny-${process.pid}.jpg`);
    const floor = await startHttpFloor();
    try {
      // Warm, as a running server is: the first requests run kiln's code (routing, multipart, the job's
      // records) before V8 has optimized it, ~1.5 ms more each on a slow machine (10.3 against 8.7 ms,
      // the floor 5.2 against 4.1, after 1 and after 100 untimed rounds).
      const [kiln, list, engine, bare] = await interleave(
        rounds,
        [
          () => post(`${s.base}/api/v1/tools/image/resize`, s.auth),
          async () => {
            const r = await httpCall(`${s.base}/api/v1/jobs`, 'GET', s.auth);
            if (r.status !== 200) throw new Error(`GET /api/v1/jobs: HTTP ${r.status}`);
          },
          async () => {
            await sharp(file).autoOrient().resize({ width: 32, fit: 'inside' }).jpeg({ quality: 90 }).toFile(alone);
          },
          () => post(`${floor.base}/resize`, {}),
        ],
        { warmup: 100 },
      );
      const k = median(kiln!);
      const l = median(list!);
      return {
        kiln: ms(k),
        reference: `GET /api/v1/jobs ${ms(l)}; sharp alone ${ms(median(engine!))}; floor: node HTTP + sharp alone ${ms(median(bare!))}`,
        ratio: k / l,
        value: k,
        goal: { on: 'kiln', op: '<=', target: 5, unit: 'ms' },
      };
    } finally {
      floor.stop();
      rmSync(alone, { force: true });
    }
  });
}

/** One plain node:http request (little client work); resolves with the status and the whole body. */
export function httpCall(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: body ? { ...headers, 'content-length': String(body.length) } : headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** POSTs a tool run and downloads its output (the synchronous answer is a download reference); throws unless both are 200. */
async function runAndDownload(base: string, url: string, headers: Record<string, string>, body: Buffer): Promise<void> {
  const run = await httpCall(url, 'POST', headers, body);
  if (run.status !== 200) throw new Error(`HTTP ${run.status}: ${run.body.toString().slice(0, 200)}`);
  const { downloadUrl } = JSON.parse(run.body.toString()) as { downloadUrl: string };
  const out = await httpCall(base + downloadUrl, 'GET', { authorization: headers.authorization ?? '' });
  if (out.status !== 200 || out.body.length < 100) throw new Error(`download: HTTP ${out.status}, ${out.body.length} bytes`);
}

/**
 * `work` on 2 workers until `windowS` has passed; the operations still running then finish and count,
 * and the rate is over the time until the last one ended (a cut-off window would drop them).
 */
async function rate(windowS: number, work: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  const end = t0 + windowS * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < end) {
      await work();
      done++;
    }
  };
  await Promise.all([worker(), worker()]);
  return done / ((performance.now() - t0) / 1000);
}

/** bench/http-floor.ts as its own process; resolves once it listens. */
async function startHttpFloor(): Promise<{ base: string; stop(): void }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('http-floor.js', import.meta.url))], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`http-floor exited ${code}`)));
  });
  return { base, stop: () => child.kill() };
}

/** Seconds of each side's untimed warm-up window in the throughput row (~25 of the daemon's resizes here). */
const WARMUP_S = 1.5;

/**
 * Resize 4000×3000 → 800 wide: the daemon under 2 connections (upload and download included) against
 * sharp in this process doing the same two at a time from the file, in alternating time windows. The
 * floor beside them: the same requests to the least HTTP service that does this resize
 * (bench/http-floor.ts), which shows what node's HTTP alone costs on these cores.
 */
export async function throughputRow(s: ServeProcess, big: string, windows: number, windowS: number): Promise<Row> {
  return row('daemon resize → 800 w, 2 connections (upload + download)', async () => {
    const m = multipart(readFileSync(big), 'photo.jpg', { width: 800 });
    const floor = await startHttpFloor();
    try {
      sharp.concurrency(0);
      const sides = [
        (w: number) =>
          rate(w, () => runAndDownload(s.base, `${s.base}/api/v1/tools/image/resize`, { ...s.auth, 'content-type': m.type }, m.body)),
        (w: number) =>
          rate(w, async () => {
            await sharp(big).resize({ width: 800 }).jpeg({ quality: 90 }).toBuffer();
          }),
        (w: number) => rate(w, () => runAndDownload(floor.base, `${floor.base}/resize`, { 'content-type': m.type }, m.body)),
      ];
      // Untimed, one short window each: the daemon's and the floor's first large uploads, sharp's first
      // resizes in each process. A warm-up round of whole windows cost the --quick run 12 of its 180 s.
      for (const side of sides) await side(WARMUP_S);
      const [daemon, local, bare] = await interleave(
        windows,
        sides.map((side) => () => side(windowS)),
        { warmup: false },
      );
      const k = median(daemon!);
      const l = median(local!);
      const f = median(bare!);
      return {
        kiln: `${k.toFixed(1)} req/s`,
        reference: `sharp in process ${l.toFixed(1)} ops/s; floor: node HTTP + sharp alone ${f.toFixed(1)} req/s (${(f / l).toFixed(2)}×)`,
        ratio: k / l,
        value: k / l,
        goal: { on: 'ratio', op: '>=', target: 0.9 },
      };
    } finally {
      floor.stop();
    }
  });
}

/**
 * What the daemon keeps once a burst of requests is over: read 3 s after the last answer (the daemon
 * gives freed C heap pages back after HEAP_TRIM_MS, 1 s, without jobs; memory inputs are let go 1 s
 * after use), with the reading at the last answer beside it.
 */
export async function mixedRow(s: ServeProcess, idleMb: number, n: number): Promise<Row> {
  return row(`daemon RSS 3 s after ${n} mixed image requests`, async () => {
    if (!idleMb) throw new Error('no idle measurement');
    const mix = await mixedImageRequests();
    await runMix(s, mix, n);
    const atOnce = s.rssMb();
    await new Promise((r) => setTimeout(r, 3000));
    const after = s.rssMb();
    return {
      kiln: `${mb(after)} (at the last answer ${mb(atOnce)})`,
      reference: `idle ${mb(idleMb)}`,
      ratio: after / idleMb,
      value: after / idleMb,
      goal: { on: 'ratio', op: '<=', target: 1.5 },
    };
  });
}

async function post(s: ServeProcess, section: string, tool: string, file: string, type: string): Promise<number> {
  const t0 = performance.now();
  const bytes = await postTool(s, { section, tool, settings: {}, file: readFileSync(file), name: path.basename(file), type });
  if (bytes < 100) throw new Error(`${tool}: ${bytes} bytes`);
  return performance.now() - t0;
}

/**
 * LibreOffice and Chromium in the daemon: the first request starts them (first-use latency), later
 * ones find them warm; the warm pool against `soffice --convert-to pdf` per call with a new profile
 * (cold). Then, after the daemon's idle time, the engines are gone.
 */
export async function engineRows(o: BenchOptions, s: ServeProcess, rounds: number, idleS: number): Promise<Row[]> {
  const fx = dir(o.fixDir, 'goals');
  const docx = await makeDocx(path.join(fx, 'report-60.docx'), 60);
  const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
  const rows: Row[] = [];
  let firstOffice = 0;
  let warmOffice = 0;
  let peakEngines = 0;
  rows.push(
    await row('engine first use: LibreOffice (DOCX → PDF)', async () => {
      firstOffice = await post(s, 'files', 'wordprocessor-to-pdf', docx, DOCX);
      warmOffice = await post(s, 'files', 'wordprocessor-to-pdf', docx, DOCX);
      peakEngines = Math.max(peakEngines, childrenTotal(s));
      return { kiln: `first ${ms(firstOffice)}`, reference: `warm ${ms(warmOffice)}`, ratio: firstOffice / warmOffice };
    }),
  );
  rows.push(
    await row('Office → PDF, warm pool vs cold `soffice`', async () => {
      if (!have('soffice')) throw new Error('soffice is not installed');
      const out = dir(o.outDir, 'goal-office');
      // Cold as kiln's own officeConvertCold and docs/DOCUMENTS.md define it: a new soffice with a new profile.
      let calls = 0;
      const soffice = async () => {
        const profile = pathToFileURL(dir(o.outDir, `goal-office-profile-${calls++}`)).href;
        await shAsync(
          'soffice',
          [`-env:UserInstallation=${profile}`, '--headless', '--norestore', '--convert-to', 'pdf', '--outdir', out, docx],
          {
            timeoutMs: 180_000,
          },
        );
        requireOutput(path.join(out, 'report-60.pdf'));
      };
      const [cold, warm] = await interleave(rounds, [soffice, () => post(s, 'files', 'wordprocessor-to-pdf', docx, DOCX)], {
        warmup: false,
      });
      const c = median(cold!);
      const w = median(warm!);
      return {
        kiln: `warm ${ms(w)}`,
        reference: `soffice, new profile ${ms(c)}`,
        ratio: c / w,
        value: c / w,
        goal: { on: 'ratio', op: '>=', target: 3 },
      };
    }),
  );
  rows.push(
    await row('engine first use: Chromium (Markdown → PDF)', async () => {
      const md = makeMarkdown(path.join(fx, 'notes-12.md'), 12);
      const first = await post(s, 'files', 'markdown-to-pdf', md, 'text/markdown');
      const warm = await post(s, 'files', 'markdown-to-pdf', md, 'text/markdown');
      peakEngines = Math.max(peakEngines, childrenTotal(s));
      return { kiln: `first ${ms(first)}`, reference: `warm ${ms(warm)}`, ratio: first / warm };
    }),
  );
  rows.push(
    await row(`engines stopped after KILN_ENGINE_IDLE_S=${idleS}`, async () => {
      const end = Date.now() + (idleS + 30) * 1000;
      while (childrenTotal(s) > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 500));
      const left = childrenTotal(s);
      if (left > 0) throw new Error(`engine processes still use ${mb(left)}`);
      // As the mixed row: what stays once the daemon has trimmed its heap (HEAP_TRIM_MS after the stop).
      const atStop = s.rssMb();
      await new Promise((r) => setTimeout(r, 3000));
      return {
        kiln: `daemon ${mb(s.rssMb())} 3 s after (${mb(atStop)} at the stop), engines 0 MB`,
        reference: `engines while warm ${mb(peakEngines)}`,
      };
    }),
  );
  return rows;
}
