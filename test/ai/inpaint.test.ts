/**
 * erase-object, ai-canvas-expand, colorize and restore-photo. Without models: the classical paths on
 * images the test draws (a textured pattern with an object on it; an old photo with scratches),
 * measured against the clean drawing; FEATURE_NOT_INSTALLED where a model is needed. The tiling
 * driver and LaMa's pre/post-processing are tested directly.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { inpaintPatchMatch } from '../../src/ai/classical/patchmatch.js';
import { holeHalfWidth } from '../../src/ai/classical/patchmatch/hole.js';
import { labToRgb, rgbToLab } from '../../src/ai/classical/lab.js';
import { lamaOutput, lamaTensors, reflect } from '../../src/ai/models/lama.js';
import { fillInTiles, maskBox } from '../../src/ai/tasks/inpaint.js';
import type { KilnError } from '../../src/core/errors.js';
import { createWorkspace } from '../../src/core/workspace.js';
import { getTool } from '../../src/tools/index.js';
import { inputFile, runTool } from '../../src/tools/run-tool.js';
import { kiln } from '../helpers/cli.js';
import { dir, emptyData, mae, png, rgbOf, run, scene, texture } from './inpaint-fixtures.js';

describe('PatchMatch completion (classical)', () => {
  it('rebuilds a periodic texture exactly and a noisy one within the noise', () => {
    const W = 128;
    const H = 96;
    const rgb = new Uint8Array(W * H * 3);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const on = ((x >> 3) + (y >> 3)) & 1;
        rgb.set(on ? [200, 120, 50] : [40, 60, 160], (y * W + x) * 3);
      }
    const clean = Uint8Array.from(rgb);
    const mask = new Uint8Array(W * H);
    for (let y = 30; y < 60; y++)
      for (let x = 40; x < 80; x++) {
        mask[y * W + x] = 1;
        rgb.set([255, 255, 255], (y * W + x) * 3);
      }
    const out = inpaintPatchMatch({ width: W, height: H, rgb, mask });
    assert.equal(
      mae(out, clean, W * H, (p) => mask[p] === 1),
      0,
    );
    assert.equal(
      mae(out, clean, W * H, (p) => mask[p] === 0),
      0,
      'known pixels never change',
    );
  });

  it('measures a hole’s half width', () => {
    const W = 100;
    const mask = new Uint8Array(W * W);
    for (let y = 40; y < 60; y++) for (let x = 10; x < 90; x++) mask[y * W + x] = 1;
    const hw = holeHalfWidth(mask, W, W);
    assert.ok(hw >= 9 && hw <= 11, `half width ${hw}`);
  });
});

describe('tiling', () => {
  it('fills in overlapping tiles, most known context first, every hole pixel once, progress per tile, cancel between tiles', async () => {
    const W = 1400;
    const H = 300;
    const rgb = new Uint8Array(W * H * 3);
    const mask = new Uint8Array(W * H);
    for (let y = 100; y < 200; y++) for (let x = 50; x < 1350; x++) mask[y * W + x] = 1;
    const calls: { w: number; h: number; known: number }[] = [];
    const progress: string[] = [];
    const r = await fillInTiles(
      { width: W, height: H, rgb, mask },
      async (t) => {
        let known = 0;
        for (let p = 0; p < t.width * t.height; p++) known += t.mask[p] ? 0 : 1;
        calls.push({ w: t.width, h: t.height, known });
        return new Uint8Array(t.width * t.height * 3).fill(calls.length * 10);
      },
      { progress: (_f, stage) => stage && progress.push(stage) },
    );
    assert.ok(calls.length >= 3, `${calls.length} tiles`);
    assert.ok(calls.every((c) => c.w <= 512 && c.h <= 512));
    // Each later tile sees the earlier tiles' pixels as known: its known share grows.
    assert.ok(calls[1]!.known > calls[0]!.known * 0.5);
    let left = 0;
    for (let p = 0; p < W * H; p++) if (mask[p] && r.rgb[p * 3] === 0) left++;
    assert.equal(left, 0, 'every hole pixel filled');
    assert.equal(progress[0], `tile 1/${progress[0]!.split('/')[1]}`);
    assert.ok(progress.length === calls.length, `one progress report per tile run: ${progress.join(', ')}`);

    const ac = new AbortController();
    let n = 0;
    await assert.rejects(
      fillInTiles(
        { width: W, height: H, rgb, mask },
        async (t) => {
          n++;
          ac.abort();
          return new Uint8Array(t.width * t.height * 3);
        },
        { signal: ac.signal },
      ),
    );
    assert.equal(n, 1, 'stopped after the tile that was running');
  });

  it('finds the mask’s box', () => {
    const m = new Uint8Array(20 * 10);
    m[3 * 20 + 5] = 1;
    m[7 * 20 + 12] = 1;
    assert.deepEqual(maskBox(m, 20, 10), { left: 5, top: 3, width: 8, height: 5 });
    assert.equal(maskBox(new Uint8Array(4), 2, 2), null);
  });
});

describe('LaMa pre- and post-processing', () => {
  it('pads a small tile by reflection to 512, zeroes holes, and reads the output range', () => {
    assert.deepEqual(
      [-2, -1, 0, 1, 2, 3, 4, 5].map((i) => reflect(i, 4)),
      [2, 1, 0, 1, 2, 3, 2, 1],
    );
    const w = 3;
    const h = 2;
    const rgb = Uint8Array.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
    const mask = Uint8Array.from([0, 1, 0, 0, 0, 0]);
    const t = lamaTensors({ width: w, height: h, rgb, mask }, 8);
    const P = 64;
    assert.equal(t.image.length, 3 * P);
    assert.equal(t.image[0], 1); // R of (0,0)
    assert.equal(t.mask[1], 1); // the hole
    assert.equal(t.image[1], 0); // hole zeroed
    assert.equal(t.image[P + 2 * 8 + 0], 0); // G of (0,2) = reflect row 0 → G of (0,0)=0
    assert.equal(t.mask[3], 1, 'x=3 reflects to x=1, a hole');
    // Output in 0–1 and in 0–255 give the same pixels.
    const out = new Float32Array(3 * P).fill(0.5);
    assert.equal(lamaOutput(out, 2, 2, 8)[0], 128);
    assert.equal(
      lamaOutput(
        out.map((v) => v * 255),
        2,
        2,
        8,
      )[0],
      128,
    );
  });

  it('converts colours to L*a*b* and back', () => {
    for (const c of [
      [0, 0, 0],
      [255, 255, 255],
      [200, 30, 40],
      [12, 200, 90],
    ] as const) {
      const [L, a, b] = rgbToLab(c[0], c[1], c[2]);
      assert.deepEqual(labToRgb(L, a, b), [...c]);
    }
    const [L, a, b] = rgbToLab(128, 128, 128);
    assert.ok(Math.abs(a) < 0.01 && Math.abs(b) < 0.01 && L > 53 && L < 54);
  });
});

describe('erase-object', () => {
  it('erases a small object with PatchMatch: the area matches the surrounding texture, nothing else changes', async () => {
    const W = 320;
    const H = 240;
    const { clean, withObj, mask } = await scene(W, H, 160, 120, 28);
    const input = await png('obj.png', withObj, W, H);
    const maskFile = await png('mask.png', mask, W, H, 1);
    const r = await run('erase-object', input, {}, { mask: maskFile });
    assert.equal(r.data?.method, 'patchmatch');
    assert.equal(r.data?.model, null);
    const out = await rgbOf(r.file!);
    assert.deepEqual([out.width, out.height], [W, H]);
    const inHole = (p: number) => mask[p] === 255;
    const err = mae(out.data, clean, W * H, inHole);
    const before = mae(withObj, clean, W * H, inHole);
    // The texture's own noise is ±8: a fill continuing the waves stays near it; the red disc was ~120 off.
    assert.ok(err < 16, `erased area differs from the clean texture by ${err.toFixed(1)} (object: ${before.toFixed(1)})`);
    // Away from the grown mask, the image is untouched.
    const far = (p: number) => {
      const x = p % W;
      const y = (p / W) | 0;
      return (x - 160) ** 2 + (y - 120) ** 2 > 32 ** 2;
    };
    assert.equal(mae(out.data, withObj, W * H, far), 0);
    assert.ok((r.data?.erasedPixels as number) > Math.PI * 28 * 28);
  });

  it('scales a mask of another size to the image', async () => {
    const W = 200;
    const H = 160;
    const { withObj } = await scene(W, H, 100, 80, 16);
    const input = await png('obj-small.png', withObj, W, H);
    const half = Buffer.alloc(100 * 80);
    for (let y = 0; y < 80; y++) for (let x = 0; x < 100; x++) if ((x - 50) ** 2 + (y - 40) ** 2 <= 9 * 9) half[y * 100 + x] = 255;
    const maskFile = await png('mask-half.png', half, 100, 80, 1);
    const r = await run('erase-object', input, { format: 'webp', quality: 90 }, { mask: maskFile });
    assert.equal((await sharp(r.file!).metadata()).format, 'webp');
    const out = await rgbOf(r.file!);
    let red = 0;
    for (let p = 0; p < W * H; p++) if (out.data[p * 3]! > 200 && out.data[p * 3 + 1]! < 60) red++;
    assert.equal(red, 0, 'no red object pixel left');
  });

  it('answers FEATURE_NOT_INSTALLED (exit 4) for a large mask without LaMa, naming the import', async () => {
    const W = 160;
    const H = 120;
    const input = await png('big.png', texture(W, H), W, H);
    const big = Buffer.alloc(W * H);
    for (let y = 10; y < 110; y++) for (let x = 10; x < 150; x++) big[y * W + x] = 255;
    const maskFile = await png('bigmask.png', big, W, H, 1);
    const res = await kiln(['erase-object', input, '--mask', maskFile, '-o', path.join(dir, 'x.png'), '--json'], {
      env: { KILN_DATA_DIR: emptyData },
    });
    assert.equal(res.code, 4, res.stderr);
    const err = JSON.parse(res.stdout).error;
    assert.equal(err.code, 'FEATURE_NOT_INSTALLED');
    assert.match(err.message, /object-eraser-colorize/);
    assert.match(err.message, /kiln features import FILE/);
    assert.equal(err.details.install.cli, 'kiln features import FILE');
  });

  it('a cancel ends the PatchMatch worker mid-tile: CANCELLED, and no later tile starts', async () => {
    const W = 1100;
    const H = 100;
    const input = await png('wire.png', texture(W, H), W, H);
    const wire = Buffer.alloc(W * H);
    for (let y = 48; y < 52; y++) for (let x = 20; x < 1080; x++) wire[y * W + x] = 255;
    const maskFile = await png('wire-mask.png', wire, W, H, 1);
    const ws = await createWorkspace();
    const abort = new AbortController();
    const tiles: string[] = [];
    try {
      const inputs = { files: [await inputFile(input)], extra: { mask: [await inputFile(maskFile)] } };
      const onProgress = (_p: number, stage?: string) => {
        if (stage?.startsWith('tile ')) tiles.push(stage);
        if (stage?.startsWith('tile 2/')) abort.abort();
      };
      await assert.rejects(
        runTool(getTool('erase-object'), inputs, {}, { workDir: ws.dir, dataDir: emptyData, signal: abort.signal, onProgress }),
        (e: KilnError) => e.code === 'CANCELLED',
      );
    } finally {
      await ws.dispose();
    }
    assert.equal(tiles.length, 2, `tiles begun: ${tiles.join(', ')}`);
    assert.match(tiles[1]!, /^tile 2\/[3-9]$/);
  });

  it('refuses an empty mask', async () => {
    const input = await png('e.png', texture(64, 64), 64, 64);
    const maskFile = await png('e-mask.png', Buffer.alloc(64 * 64), 64, 64, 1);
    await assert.rejects(run('erase-object', input, {}, { mask: maskFile }), /marks nothing/);
  });
});

describe('ai-canvas-expand', () => {
  it('tier fast: exact new size, original kept, no seam at the old edge', async () => {
    const W = 240;
    const H = 180;
    const input = await png('expand.png', texture(W, H), W, H);
    const s = { extendLeft: 60, extendTop: 40, extendRight: 0, extendBottom: 20, tier: 'fast' };
    const r = await run('ai-canvas-expand', input, s);
    assert.equal(r.data?.method, 'patchmatch');
    assert.equal(r.data?.model, null);
    const out = await rgbOf(r.file!);
    assert.deepEqual([out.width, out.height], [W + 60, H + 60]);
    const orig = await rgbOf(input);
    let diff = 0;
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++)
        for (let c = 0; c < 3; c++) diff += Math.abs(out.data[((y + 40) * out.width + x + 60) * 3 + c]! - orig.data[(y * W + x) * 3 + c]!);
    assert.equal(diff, 0, 'original pixels unchanged');
    // Seam: the step across the old left edge against the ordinary step between neighbouring columns.
    const step = (x: number, y0: number, y1: number) => {
      let e = 0;
      for (let y = y0; y < y1; y++)
        for (let c = 0; c < 3; c++) e += Math.abs(out.data[(y * out.width + x) * 3 + c]! - out.data[(y * out.width + x - 1) * 3 + c]!);
      return e / ((y1 - y0) * 3);
    };
    const seam = step(60, 40, 40 + H);
    let typical = 0;
    for (let x = 100; x < 200; x++) typical += step(x, 40, 40 + H);
    typical /= 100;
    assert.ok(seam < typical * 1.5, `step across the old edge ${seam.toFixed(1)}, typical ${typical.toFixed(1)}`);
    // The new area carries the texture (not a flat or smeared fill): its column steps are like the original's.
    let filled = 0;
    for (let x = 5; x < 55; x++) filled += step(x, 40, 40 + H);
    filled /= 50;
    assert.ok(filled > typical * 0.6, `new area column step ${filled.toFixed(1)} vs ${typical.toFixed(1)}`);
  });

  it('tier balanced without LaMa: FEATURE_NOT_INSTALLED (exit 4); all sides 0 is refused', async () => {
    const input = await png('expand2.png', texture(64, 64), 64, 64);
    const res = await kiln(['ai-canvas-expand', input, '--extend-left', '16', '-o', path.join(dir, 'y.png')], {
      env: { KILN_DATA_DIR: emptyData },
    });
    assert.equal(res.code, 4, res.stderr);
    assert.match(res.stderr, /tier balanced outpaints with LaMa.*kiln features import FILE/);
    const zero = await kiln(['ai-canvas-expand', input, '--tier', 'fast', '-o', path.join(dir, 'z.png')], {
      env: { KILN_DATA_DIR: emptyData },
    });
    assert.notEqual(zero.code, 0);
    assert.match(zero.stderr, /At least one of --extend-top, --extend-right, --extend-bottom, --extend-left must be greater than 0/);
  });
});

describe('colorize', () => {
  it('model opencv: a labelled tint, no model; auto without DDColor: exit 4', async () => {
    const W = 96;
    const grey = Buffer.alloc(W * W * 3);
    for (let p = 0; p < W * W; p++) grey.fill((p % W) * 2 + 30, p * 3, p * 3 + 3);
    const input = await png('bw.png', grey, W, W);
    const r = await run('colorize', input, { model: 'opencv', intensity: 1 });
    assert.equal(r.data?.method, 'tint');
    assert.equal(r.data?.model, null);
    assert.match(String(r.data?.note), /not natural colour/);
    const out = await rgbOf(r.file!);
    let chroma = 0;
    for (let p = 0; p < W * W; p++)
      chroma += Math.max(...out.data.subarray(p * 3, p * 3 + 3)) - Math.min(...out.data.subarray(p * 3, p * 3 + 3));
    assert.ok(chroma / (W * W) > 5, 'colour added');
    // Lightness is the photo's.
    const [L0] = rgbToLab(grey[0]!, grey[1]!, grey[2]!);
    const [L1] = rgbToLab(out.data[0]!, out.data[1]!, out.data[2]!);
    assert.ok(Math.abs(L0 - L1) < 1.5);
    const none = await run('colorize', input, { model: 'opencv', intensity: 0 });
    assert.equal(mae(await rgbOf(none.file!).then((o) => o.data), grey, W * W, () => true) < 1, true);

    const res = await kiln(['colorize', input, '-o', path.join(dir, 'c.png')], { env: { KILN_DATA_DIR: emptyData } });
    assert.equal(res.code, 4, res.stderr);
    assert.match(res.stderr, /object-eraser-colorize.*kiln features import FILE/);
  });
});

describe('restore-photo', () => {
  it('finds and fills scratches classically, denoises, and says what was skipped', async () => {
    const W = 256;
    const H = 192;
    // A soft "photo": smooth shading and a dark blob, then white scratches across it.
    const clean = Buffer.alloc(W * H * 3);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const v = 90 + 80 * Math.sin(x / 40) * Math.cos(y / 50) - ((x - 170) ** 2 + (y - 90) ** 2 < 900 ? 50 : 0);
        clean.fill(Math.max(0, Math.min(255, Math.round(v))), (y * W + x) * 3, (y * W + x) * 3 + 3);
      }
    const scratched = Buffer.from(clean);
    const scratch = new Uint8Array(W * H);
    for (let x = 10; x < 240; x++) {
      const y = Math.round(30 + x * 0.5);
      for (const yy of [y, y + 1]) {
        scratch[yy * W + x] = 1;
        scratched.fill(250, (yy * W + x) * 3, (yy * W + x) * 3 + 3);
      }
    }
    for (let y = 20; y < 170; y++) {
      scratch[y * W + 60] = 1;
      scratched.fill(15, (y * W + 60) * 3, (y * W + 60) * 3 + 3);
    }
    const input = await png('old.png', scratched, W, H);
    const r = await run('restore-photo', input, { denoise: false });
    const steps = r.data?.steps as Record<string, unknown>[];
    const sc = steps.find((s) => s.step === 'scratches')!;
    assert.equal(sc.detection, 'classical');
    assert.equal(sc.inpaint, 'patchmatch');
    assert.equal(sc.inpaintModel, null);
    assert.ok(steps.find((s) => s.step === 'faces')?.skipped);
    assert.ok((r.data!.warnings as string[]).some((w) => /face enhancement skipped/.test(w)));
    const out = await rgbOf(r.file!);
    const on = (p: number) => scratch[p] === 1;
    const before = mae(scratched, clean, W * H, on);
    const after = mae(out.data, clean, W * H, on);
    assert.ok(after < before * 0.2, `scratch pixels off by ${after.toFixed(1)} after, ${before.toFixed(1)} before`);
    const elsewhere = mae(out.data, clean, W * H, (p) => !on(p));
    assert.ok(elsewhere < 3, `rest of the photo changed by ${elsewhere.toFixed(2)}`);

    const heavy = await run('restore-photo', input, { mode: 'heavy', colorize: true, faceEnhancement: false });
    assert.equal(heavy.data?.denoiseStrength, 50);
    assert.equal(heavy.data?.fidelity, 0.5);
    const hs = heavy.data?.steps as Record<string, unknown>[];
    const dn = hs.find((s) => s.step === 'denoise')!;
    assert.equal(dn.method, 'non-local means');
    assert.equal(dn.model, null);
    assert.equal(dn.strength, 50);
    assert.ok(hs.find((s) => s.step === 'colorize')?.skipped, 'colorize skipped without DDColor');
    const light = await run('restore-photo', input, { mode: 'light', denoiseStrength: 40 });
    assert.equal(light.data?.scratchRemoval, false);
    assert.equal(light.data?.denoiseStrength, 40, 'an explicit value wins over the preset');
  });
});
