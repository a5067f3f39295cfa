/**
 * erase-object, ai-canvas-expand, colorize and restore-photo with imported models: tiny ONNX networks of
 * the real ones' shapes (test/ai/onnx-builder.ts), so loaders, pre/post-processing and tiling run for real.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { labToRgb, rgbToLab } from '../../src/ai/classical/lab.js';
import { findBundle } from '../../src/ai/bundles/list.js';
import { featureStatus } from '../../src/ai/features.js';
import { detectScratchesModel } from '../../src/ai/tasks/restore.js';
import { ARCHIVE_INDEX, importBundle } from '../../src/ai/install/archive.js';
import type { KilnError } from '../../src/core/errors.js';
import { exec } from '../../src/core/process.js';
import { tempDir } from '../helpers/fixtures.js';
import { kiln } from '../helpers/cli.js';
import { api, filePart, form, startServer } from '../helpers/server.js';
import { GFPGAN_FILE } from '../../src/ai/bundles/upscale-enhance.js';
import { cachedTarball, installForTest } from './install-helper.js';
import { importArchive as importModels } from './import-helper.js';
import { gfpganLike, onnxModel } from './onnx-builder.js';
import { dir, emptyData, mae, png, rgbOf, run, scene, texture } from './inpaint-fixtures.js';

/**
 * Tiny ONNX networks with the inputs and outputs of the real ones, imported as bundle archives made
 * the way `kiln features export` makes them (kiln-bundle.json, files/, runtimes/ with the pinned
 * onnxruntime tarballs from the shared cache): loaders, pre/post-processing and tiling run for real.
 */
describe('with imported models (tiny networks of the same shapes)', () => {
  const modelData = tempDir('kiln-inpaint-models-');

  /**
   * LaMa's interface: image 1×3×512×512 + mask 1×1×512×512 → 1×3×512×512; here image + fill·mask, so a
   * filled hole is grey `fill` (mid grey by default). `side` other than 512 makes a LaMa of another interface.
   */
  const lamaLike = (fill = 0.5, side = 512) =>
    onnxModel({
      name: 'lama-like',
      nodes: [
        { op: 'Mul', inputs: ['mask', 'fill'], outputs: ['m2'] },
        { op: 'Add', inputs: ['image', 'm2'], outputs: ['output'] },
      ],
      initializers: [{ name: 'fill', dims: [1], values: [fill] }],
      inputs: [
        { name: 'image', shape: [1, 3, side, side] },
        { name: 'mask', shape: [1, 1, side, side] },
      ],
      outputs: [{ name: 'output', shape: [1, 3, side, side] }],
    });
  /** DDColor's interface: 1×3×512×512 → a*b* 1×2×512×512; here a* = 10, b* = 40·G − 10 (G the grey input, 0–1), inside sRGB's gamut. */
  const ddcolorLike = () =>
    onnxModel({
      name: 'ddcolor-like',
      nodes: [{ op: 'Conv', inputs: ['input', 'w', 'b'], outputs: ['output'], attrs: [{ name: 'kernel_shape', ints: [1, 1] }] }],
      initializers: [
        { name: 'w', dims: [2, 3, 1, 1], values: [0, 0, 0, 0, 40, 0] },
        { name: 'b', dims: [2], values: [10, -10] },
      ],
      inputs: [{ name: 'input', shape: [1, 3, 512, 512] }],
      outputs: [{ name: 'output', shape: [1, 2, 512, 512] }],
    });
  /** Scratch detection's interface: grey 1×1×512×512 in −1…1 → logits; here 20·x − 16: only near-white marks are scratches. */
  const scratchLike = () =>
    onnxModel({
      name: 'scratch-like',
      nodes: [{ op: 'Conv', inputs: ['input', 'w', 'b'], outputs: ['output'], attrs: [{ name: 'kernel_shape', ints: [1, 1] }] }],
      initializers: [
        { name: 'w', dims: [1, 1, 1, 1], values: [20] },
        { name: 'b', dims: [1], values: [-16] },
      ],
      inputs: [{ name: 'input', shape: [1, 1, 512, 512] }],
      outputs: [{ name: 'output', shape: [1, 1, 512, 512] }],
    });

  // Only the first import of a bundle carries the onnxruntime tarballs; later ones reuse the installed runtime.
  const imported = new Set<string>();
  const importArchive = async (bundleId: string, files: Record<string, Buffer>) => {
    await importModels(modelData, dir, bundleId, files, !imported.has(bundleId));
    imported.add(bundleId);
  };

  it('a bundle imported without ddcolor.onnx: colorize names the missing file', async () => {
    await importArchive('object-eraser-colorize', { 'lama-fp32.onnx': lamaLike() });
    const s = await featureStatus(modelData, 'object-eraser-colorize');
    assert.equal(s.state, 'installed');
    assert.deepEqual(
      s.imports?.map((i) => [i.file, i.state]),
      [
        ['lama-fp32.onnx', 'installed'],
        ['ddcolor.onnx', 'missing'],
      ],
    );
    const input = await png('bw-missing.png', texture(32, 32), 32, 32);
    await assert.rejects(
      run('colorize', input, {}, {}, modelData),
      (e: KilnError) => e.code === 'FEATURE_NOT_INSTALLED' && /ddcolor\.onnx/.test(e.message),
    );
    await importArchive('object-eraser-colorize', { 'lama-fp32.onnx': lamaLike(), 'ddcolor.onnx': ddcolorLike() });
    await importArchive('photo-restoration', { 'scratch-detection.onnx': scratchLike() });
  });

  it('erase-object: a large mask runs LaMa in tiles; holes are what the network gave, known pixels untouched', async () => {
    const W = 900;
    const H = 640;
    const img = texture(W, H);
    const mask = Buffer.alloc(W * H);
    for (let y = 100; y < 560; y++) for (let x = 120; x < 780; x++) mask[y * W + x] = 255;
    const input = await png('lama-in.png', img, W, H);
    const maskFile = await png('lama-mask.png', mask, W, H, 1);
    const r = await run('erase-object', input, {}, { mask: maskFile }, modelData);
    assert.equal(r.data?.method, 'lama');
    assert.equal(r.data?.model, 'lama-fp32');
    assert.equal(r.data?.device, 'cpu');
    assert.ok((r.data?.tiles as number) >= 2, `tiles ${r.data?.tiles}`);
    const out = await rgbOf(r.file!);
    const grown = (p: number) => {
      const x = p % W;
      const y = (p / W) | 0;
      return x >= 118 && x < 782 && y >= 98 && y < 562;
    };
    assert.equal(
      mae(out.data, img, W * H, (p) => !grown(p)),
      0,
      'known pixels untouched',
    );
    let off = 0;
    for (let p = 0; p < W * H; p++) if (grown(p)) for (let c = 0; c < 3; c++) off = Math.max(off, Math.abs(out.data[p * 3 + c]! - 128));
    assert.ok(off <= 1, `hole pixels within ${off} of the network's 0.5`);
  });

  it('ai-canvas-expand tier balanced outpaints with LaMa', async () => {
    const input = await png('lama-expand.png', texture(200, 150), 200, 150);
    const r = await run('ai-canvas-expand', input, { extendRight: 50, extendBottom: 30 }, {}, modelData);
    assert.equal(r.data?.method, 'lama');
    const out = await rgbOf(r.file!);
    assert.deepEqual([out.width, out.height], [250, 180]);
    assert.deepEqual([...out.data.subarray((179 * 250 + 249) * 3, (179 * 250 + 249) * 3 + 3)], [128, 128, 128]);
    const high = await run('ai-canvas-expand', input, { extendTop: 20, tier: 'high', format: 'webp' }, {}, modelData);
    assert.deepEqual([high.data?.method, high.data?.model, high.data?.height], ['lama', 'lama-fp32', 170]);
  });

  it('colorize runs DDColor: a*b* from the network under the photo’s own lightness, scaled by intensity', async () => {
    const W = 300;
    const H = 200;
    const grey = Buffer.alloc(W * H * 3);
    for (let p = 0; p < W * H; p++) grey.fill(p % W < W / 2 ? 60 : 200, p * 3, p * 3 + 3);
    const input = await png('bw2.png', grey, W, H);
    const r = await run('colorize', input, { intensity: 1 }, {}, modelData);
    assert.equal(r.data?.method, 'ddcolor');
    assert.equal(r.data?.model, 'ddcolor');
    const out = await rgbOf(r.file!);
    for (const [x, v] of [
      [40, 60],
      [260, 200],
    ] as const) {
      const i = (100 * W + x) * 3;
      const [L, a, b] = rgbToLab(out.data[i]!, out.data[i + 1]!, out.data[i + 2]!);
      const [L0] = rgbToLab(v, v, v);
      const G = labToRgb(L0, 0, 0)[1] / 255;
      assert.ok(Math.abs(L - L0) < 1, `L ${L} vs ${L0}`);
      assert.ok(Math.abs(a - 10) < 2, `a* ${a}`);
      assert.ok(Math.abs(b - (40 * G - 10)) < 2, `b* ${b} vs ${40 * G - 10}`);
    }
    const half = await run('colorize', input, { intensity: 0.5, model: 'ddcolor' }, {}, modelData);
    const h = await rgbOf(half.file!);
    const [, a] = rgbToLab(h.data[(100 * W + 40) * 3]!, h.data[(100 * W + 40) * 3 + 1]!, h.data[(100 * W + 40) * 3 + 2]!);
    assert.ok(Math.abs(a - 5) < 1.5, `half intensity a* ${a}`);
  });

  it('restore-photo: scratch detection in overlapping tiles, LaMa fill, DDColor', async () => {
    const W = 600;
    const H = 460;
    const photo = Buffer.alloc(W * H * 3);
    for (let p = 0; p < W * H; p++) photo.fill(80 + ((p % W) % 90), p * 3, p * 3 + 3);
    const scratch = new Uint8Array(W * H);
    for (let x = 20; x < 580; x++) {
      const y = Math.round(40 + x * 0.6);
      scratch[y * W + x] = 1;
      photo.fill(250, (y * W + x) * 3, (y * W + x) * 3 + 3);
    }
    const input = await png('old2.png', photo, W, H);
    const r = await run('restore-photo', input, { denoise: false, faceEnhancement: false, colorize: true }, {}, modelData);
    const steps = r.data?.steps as Record<string, unknown>[];
    const sc = steps.find((s) => s.step === 'scratches')!;
    assert.equal(sc.detection, 'scratch-detection');
    assert.equal(sc.detectionTiles, 4);
    assert.equal(sc.inpaint, 'lama');
    // Every scratch pixel found (grown by 1 px: ≤ 9 per pixel), nothing else.
    assert.ok((sc.pixels as number) >= 560 && (sc.pixels as number) <= 560 * 9, `pixels ${sc.pixels}`);
    assert.equal(steps.find((s) => s.step === 'colorize')?.method, 'ddcolor');
    const out = await rgbOf(r.file!);
    let white = 0;
    for (let p = 0; p < W * H; p++) if (scratch[p] && out.data[p * 3 + 1]! > 240) white++;
    assert.equal(white, 0, 'no scratch left');
    // The detector reports each tile and stops between tiles when cancelled.
    const grey = new Uint8Array(W * H).fill(128);
    const stages: string[] = [];
    await detectScratchesModel(grey, W, H, 0.5, { dataDir: modelData, progress: (_f, s) => s && stages.push(s) });
    assert.deepEqual(
      stages,
      [1, 2, 3, 4].map((i) => `scratches: tile ${i}/4`),
    );
    const abort = new AbortController();
    let runs = 0;
    await assert.rejects(
      detectScratchesModel(grey, W, H, 0.5, {
        dataDir: modelData,
        signal: abort.signal,
        progress: (_f, s) => {
          if (s) runs++;
          if (runs === 2) abort.abort();
        },
      }),
    );
    assert.equal(runs, 2, 'no tile started after the cancel');
  });

  // Imported models are the admin's files: a replaced file is used at once by the warm model host, and a
  // file with another interface fails as FEATURE_INCOMPATIBLE naming it (never INTERNAL, never a wrong picture).
  /** Three planes in, the same out: neither LaMa (image and mask) nor DDColor (a*b*). */
  const identity512 = () =>
    onnxModel({
      name: 'identity',
      nodes: [{ op: 'Identity', inputs: ['input'], outputs: ['output'] }],
      initializers: [],
      inputs: [{ name: 'input', shape: [1, 3, 512, 512] }],
      outputs: [{ name: 'output', shape: [1, 3, 512, 512] }],
    });
  /** erase-object with a mask too large for PatchMatch, so LaMa runs; the grey it put in the hole. */
  async function eraseLarge(): Promise<{ grey: number; data: Record<string, unknown> }> {
    const W = 96;
    const H = 72;
    const input = await png('iface.png', texture(W, H), W, H);
    const mask = Buffer.alloc(W * H);
    for (let y = 16; y < 56; y++) for (let x = 20; x < 76; x++) mask[y * W + x] = 255;
    const r = await run('erase-object', input, { format: 'png' }, { mask: await png('iface-mask.png', mask, W, H, 1) }, modelData);
    const out = await rgbOf(r.file!);
    return { grey: out.data[(36 * W + 48) * 3]!, data: r.data! };
  }

  it('a re-imported model file is what the next run uses (the warm model is replaced)', async () => {
    await importArchive('object-eraser-colorize', { 'lama-fp32.onnx': lamaLike() });
    const first = await eraseLarge();
    assert.equal(first.data.method, 'lama');
    assert.equal(first.grey, 128);
    await importArchive('object-eraser-colorize', { 'lama-fp32.onnx': lamaLike(0.25) });
    const second = await eraseLarge();
    assert.equal(second.grey, 64, 'the newly imported LaMa ran, not the one still loaded');
  });

  it('a file of another interface answers FEATURE_INCOMPATIBLE naming it (CLI exit 4)', async () => {
    const incompatible = (file: string, got: RegExp) => (e: KilnError) => {
      assert.equal(e.code, 'FEATURE_INCOMPATIBLE', e.message);
      assert.equal(e.reason, 'model-interface');
      assert.match(e.message, new RegExp(`imported ${file.replace('.', '\\.')}`));
      assert.match(e.message, got);
      assert.match(e.message, /kiln features import FILE/);
      return true;
    };
    // A 256-px LaMa: onnxruntime refuses the 512² feeds.
    await importArchive('object-eraser-colorize', {
      'lama-fp32.onnx': lamaLike(0.5, 256),
      'ddcolor.onnx': identity512(),
    });
    await assert.rejects(eraseLarge(), incompatible('lama-fp32.onnx', /invalid dimensions/i));
    // DDColor answering three planes: caught on its output, before any colour is made of it.
    const grey = await png('iface-grey.png', Buffer.alloc(32 * 32 * 3, 120), 32, 32);
    await assert.rejects(run('colorize', grey, {}, {}, modelData), incompatible('ddcolor.onnx', /answered 1×3×512×512 where 1×2×512×512/));
    // A one-input network where LaMa takes image and mask: refused when it is loaded.
    await importArchive('object-eraser-colorize', { 'lama-fp32.onnx': identity512() });
    await assert.rejects(eraseLarge(), incompatible('lama-fp32.onnx', /takes 1 input/));
    const res = await kiln(['colorize', grey, '-o', path.join(dir, 'iface-c.png'), '--json'], { env: { KILN_DATA_DIR: modelData } });
    assert.equal(res.code, 4, res.stderr);
    assert.equal(JSON.parse(res.stdout).error.code, 'FEATURE_INCOMPATIBLE');
  });

  it('a model file that is no ONNX network answers FEATURE_INCOMPATIBLE naming it, not an internal error', async () => {
    // An import-only file has no pin to check at import: a truncated copy or another file goes in.
    await importArchive('object-eraser-colorize', { 'lama-fp32.onnx': Buffer.from('not an onnx model'), 'ddcolor.onnx': ddcolorLike() });
    await assert.rejects(eraseLarge(), (e: KilnError) => {
      assert.equal(e.code, 'FEATURE_INCOMPATIBLE', e.message);
      assert.equal(e.reason, 'model-load');
      assert.match(e.message, /lama-fp32\.onnx/);
      assert.match(e.message, /kiln features import FILE/);
      return true;
    });
    await importArchive('object-eraser-colorize', { 'lama-fp32.onnx': lamaLike(), 'ddcolor.onnx': ddcolorLike() });
    assert.equal((await eraseLarge()).grey, 128, 'a good import runs again');
  });
});

describe('restore-photo face enhancement', () => {
  it('runs GFPGAN (a tiny network of its shape, imported) on the faces the face-detection bundle finds', async () => {
    const data = tempDir('kiln-restore-faces-');
    await installForTest('face-detection', data);
    await installForTest('upscale-enhance', data);
    const pack = mkdtempSync(path.join(dir, 'gfpgan-'));
    mkdirSync(path.join(pack, 'files'));
    writeFileSync(path.join(pack, 'files', GFPGAN_FILE), gfpganLike());
    const b = findBundle('upscale-enhance')!;
    writeFileSync(
      path.join(pack, ARCHIVE_INDEX),
      JSON.stringify({ format: 'kiln-bundle/1', bundle: b.id, version: b.version, files: [], runtimes: [] }),
    );
    const archive = path.join(dir, 'gfpgan.tar');
    await exec('tar', ['-cf', archive, '-C', pack, ARCHIVE_INDEX, 'files']);
    await importBundle(data, archive);
    const face = findBundle('face-detection')!.files[0]!.source as { tarball: Parameters<typeof cachedTarball>[0] };
    await exec('tar', ['-xzf', await cachedTarball(face.tarball), '-C', dir, '--strip-components=2', 'package/demo/sample1.jpg']);
    const r = await run('restore-photo', path.join(dir, 'sample1.jpg'), { scratchRemoval: false, denoise: false, fidelity: 0 }, {}, data);
    const f = (r.data!.steps as Record<string, unknown>[]).find((s) => s.step === 'faces')!;
    assert.equal(f.method, 'gfpgan');
    assert.equal(f.model, 'gfpgan');
    assert.equal(f.faces, 3);
    assert.equal(f.strength, 1);
    assert.deepEqual(r.data?.warnings, []);
    // The network negates its crop: the faces changed, a corner far from them did not.
    const before = await rgbOf(path.join(dir, 'sample1.jpg'));
    const after = await rgbOf(r.file!);
    const at = (img: typeof before, x: number, y: number) => img.data[(y * img.width + x) * 3]!;
    assert.ok(Math.abs(at(after, 502, 473) - at(before, 502, 473)) > 40, 'face centre changed');
    assert.ok(Math.abs(at(after, 5, 5) - at(before, 5, 5)) < 6, 'corner unchanged (JPEG re-encode only)');
  });
});

describe('over HTTP', () => {
  it('POST erase-object with the mask upload and format as a form field; a large mask is 409 naming the import', async () => {
    const s = await startServer({ dataDir: emptyData, env: { SYNC_WAIT_MS: '120000' } });
    try {
      const W = 200;
      const H = 150;
      const { withObj, mask } = await scene(W, H, 100, 75, 14);
      const input = await png('http-obj.png', withObj, W, H);
      const maskFile = await png('http-mask.png', mask, W, H, 1);
      const r = await api(
        s,
        s.token,
        'POST',
        '/api/v1/tools/image/erase-object',
        await form({ file: await filePart(input), mask: await filePart(maskFile), format: 'webp' }),
      );
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.data.method, 'patchmatch');
      const dl = await fetch(s.url + r.body.downloadUrl, { headers: { authorization: `Bearer ${s.token}` } });
      const m = await sharp(Buffer.from(await dl.arrayBuffer())).metadata();
      assert.deepEqual([m.format, m.width, m.height], ['webp', W, H]);

      const big = Buffer.alloc(W * H, 255);
      big.fill(0, 0, W * 10);
      const bigFile = await png('http-big.png', big, W, H, 1);
      const e = await api(
        s,
        s.token,
        'POST',
        '/api/v1/tools/image/erase-object',
        await form({ file: await filePart(input), mask: await filePart(bigFile) }),
      );
      assert.equal(e.status, 409, e.text);
      assert.equal(e.body.error.code, 'FEATURE_NOT_INSTALLED');
      assert.match(e.body.error.message, /POST \/api\/v1\/admin\/features\/import/);
      const none = await api(s, s.token, 'POST', '/api/v1/tools/image/erase-object', await form({ file: await filePart(input) }));
      assert.equal(none.status, 400, 'the mask is required');
    } finally {
      await s.close();
    }
  });
});
