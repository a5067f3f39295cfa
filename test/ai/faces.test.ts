/**
 * Face detection on real photos: the face-detection bundle and the tfjs runtime are installed from
 * the npm registry (cached in KILN_AI_CACHE_DIR, see install-helper.ts), and the group photos that
 * ship in the same face-api tarball are the inputs. Expected face centres were checked by eye once
 * (boxes drawn on the photos) and are pinned coarsely.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import sharp from 'sharp';
import { findBundle } from '../../src/ai/bundles/list.js';
import { removeInstall } from '../../src/ai/install/layout.js';
import type { KilnError } from '../../src/core/errors.js';
import { exec } from '../../src/core/process.js';
import { type DetectedFaces, detectFaces } from '../../src/ai/tasks/faces.js';
import type { RunOutcome } from '../../src/tools/run-tool.js';
import { runKept } from './run-kept.js';
import { kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { cachedTarball, installForTest } from './install-helper.js';

const dir = tempDir('kiln-faces-');
let dataDir: string;
const sample = (n: number) => path.join(dir, `sample${n}.jpg`);

/** Face centres in sample1 (3 people) and sample4 (4 people), left to right, in pixels of the 1920-wide photos. */
const CENTRES: Record<number, [number, number][]> = {
  1: [
    [502, 473],
    [932, 530],
    [1575, 316],
  ],
  4: [
    [336, 307],
    [756, 181],
    [1073, 291],
    [1352, 262],
  ],
};

const centre = (b: { x: number; y: number; width: number; height: number }) => [b.x + b.width / 2, b.y + b.height / 2];

function run(id: string, file: string, settings: Record<string, unknown>): Promise<RunOutcome & { file?: string }> {
  return runKept(dir, dataDir, id, file, settings);
}

async function rgba(file: string) {
  const { data, info } = await sharp(file).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

type Box = { x: number; y: number; width: number; height: number };
const inside = (x: number, y: number, boxes: Box[], margin = 0) =>
  boxes.some((b) => x >= b.x - margin && x < b.x + b.width + margin && y >= b.y - margin && y < b.y + b.height + margin);

before(async () => {
  dataDir = await installForTest('face-detection');
  const tarball = findBundle('face-detection')!.files[0]!.source;
  assert.equal(tarball.kind, 'npm');
  const tgz = await cachedTarball(tarball.tarball);
  mkdirSync(dir, { recursive: true });
  await exec('tar', ['-xzf', tgz, '-C', dir, '--strip-components=2', 'package/demo/sample1.jpg', 'package/demo/sample4.jpg']);
});

describe('detectFaces (SSD MobileNet v1 + 68 landmarks on tfjs)', () => {
  for (const n of [1, 4]) {
    it(`finds the ${CENTRES[n]!.length} faces of sample${n}.jpg where they are`, async () => {
      const faces = await detectFaces(sharp(sample(n)).autoOrient(), { minConfidence: 0.5 }, { dataDir });
      assert.equal(faces.length, CENTRES[n]!.length, JSON.stringify(faces.map((f) => f.box)));
      const got = faces.map((f) => centre(f.box)).sort((a, b) => a[0]! - b[0]!);
      got.forEach(([x, y], i) => {
        const [ex, ey] = CENTRES[n]![i]!;
        assert.ok(Math.hypot(x! - ex, y! - ey) < 40, `face ${i}: centre ${x},${y}, expected about ${ex},${ey}`);
      });
      for (const f of faces) {
        assert.ok(f.score > 0.5 && f.score <= 1);
        assert.ok(f.box.width > 120 && f.box.width < 260 && f.box.height > 180 && f.box.height < 320, JSON.stringify(f.box));
        assert.equal(f.landmarks.length, 68);
        // Eyes inside the face box, in its upper part, the left one left of the right one.
        for (const e of [f.eyes.left, f.eyes.right]) {
          const [ex, ey] = centre(e);
          assert.ok(ex! > f.box.x && ex! < f.box.x + f.box.width, 'eye inside the face (x)');
          assert.ok(ey! > f.box.y && ey! < f.box.y + f.box.height * 0.6, 'eye in the upper part of the face');
        }
        assert.ok(centre(f.eyes.left)[0]! < centre(f.eyes.right)[0]!);
      }
      assert.equal(faces.info.model, 'face-ssd-mobilenetv1');
      assert.match(faces.info.provider, /^tfjs-(wasm|cpu)$/);
    });
  }

  it('keeps the models warm and takes raw RGB too', async () => {
    const { data, info } = await sharp(sample(1)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const faces: DetectedFaces = await detectFaces({ width: info.width, height: info.height, rgb: data }, {}, { dataDir });
    assert.equal(faces.length, 3);
    assert.equal(faces.info.warm, true);
    assert.equal(faces.landmarksInfo?.warm, true);
  });

  it('a bundle removed after the run was let in (its runtime kept) answers FEATURE_NOT_INSTALLED naming the install, not a damaged file', async () => {
    // runTool checks the bundle before the work; `kiln features remove` may come between that check
    // and the host reading the model. The files are gone, not damaged: no 'remove, then install'.
    const removed = await installForTest('face-detection', tempDir('kiln-faces-removed-'));
    assert.equal(await removeInstall(removed, 'bundle', 'face-detection'), true);
    const blank = sharp({ create: { width: 64, height: 48, channels: 3, background: '#808080' } });
    await assert.rejects(detectFaces(blank, {}, { dataDir: removed }), (e: KilnError) => {
      assert.equal(e.code, 'FEATURE_NOT_INSTALLED', e.message);
      assert.equal(e.reason, 'bundle-removed');
      assert.match(e.message, /kiln features install face-detection/);
      return true;
    });
  });

  it('a high threshold drops the less certain faces; a blank image has none', async () => {
    const blank = await detectFaces(sharp({ create: { width: 640, height: 480, channels: 3, background: '#808080' } }), {}, { dataDir });
    assert.equal(blank.length, 0);
    const strict = await detectFaces(sharp(sample(4)), { minConfidence: 0.9 }, { dataDir });
    assert.equal(strict.length, 3);
  });
});

describe('blur-faces', () => {
  it('blurs inside the face boxes and nothing else', async () => {
    const png = path.join(dir, 'group.png');
    await sharp(sample(1)).png().toFile(png);
    const r = await run('blur-faces', png, {});
    assert.equal(r.data?.faces, 3);
    assert.equal(r.data?.model, 'face-ssd-mobilenetv1');
    assert.match(String(r.data?.provider), /^tfjs-/);
    const boxes = r.data?.boxes as Box[];
    const a = await rgba(png);
    const b = await rgba(r.file!);
    assert.deepEqual([b.width, b.height], [a.width, a.height]);
    let changedOutside = 0;
    const diffInside = boxes.map(() => 0);
    for (let y = 0; y < a.height; y++)
      for (let x = 0; x < a.width; x++) {
        const i = (y * a.width + x) * 4;
        const d = Math.abs(a.data[i]! - b.data[i]!) + Math.abs(a.data[i + 1]! - b.data[i + 1]!) + Math.abs(a.data[i + 2]! - b.data[i + 2]!);
        if (!inside(x, y, boxes, 1)) changedOutside += d ? 1 : 0;
        boxes.forEach((bx, k) => {
          if (inside(x, y, [bx])) diffInside[k]! += d;
        });
      }
    assert.equal(changedOutside, 0, 'pixels outside the face boxes changed');
    for (const [k, bx] of boxes.entries()) assert.ok(diffInside[k]! / (bx.width * bx.height) > 5, `face ${k} barely changed`);
  });
});

describe('red-eye-removal', () => {
  it('fixes red pupils painted into the eyes and changes nothing outside the eye regions', async () => {
    const faces = await detectFaces(sharp(sample(1)), {}, { dataDir });
    const pupils = faces.flatMap((f) =>
      [f.landmarks.slice(36, 42), f.landmarks.slice(42, 48)].map((pts) => ({
        x: pts.reduce((s, p) => s + p.x, 0) / 6,
        y: pts.reduce((s, p) => s + p.y, 0) / 6,
        r: Math.max(3, (Math.max(...pts.map((p) => p.x)) - Math.min(...pts.map((p) => p.x))) * 0.15),
      })),
    );
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1920" height="1280">${pupils
      .map((p) => `<circle cx="${p.x}" cy="${p.y}" r="${p.r}" fill="rgb(210,25,30)"/>`)
      .join('')}</svg>`;
    const red = path.join(dir, 'red-eyes.png');
    await sharp(sample(1))
      .composite([{ input: Buffer.from(svg) }])
      .png()
      .toFile(red);

    const r = await run('red-eye-removal', red, {});
    assert.equal(r.data?.faces, 3);
    assert.ok((r.data?.correctedPixels as number) > 0);
    const eyes = r.data?.eyes as Box[];
    assert.equal(eyes.length, 6);
    const a = await rgba(red);
    const b = await rgba(r.file!);
    let changedOutside = 0;
    for (let y = 0; y < a.height; y++)
      for (let x = 0; x < a.width; x++) {
        if (inside(x, y, eyes)) continue;
        const i = (y * a.width + x) * 4;
        if (a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2]) changedOutside++;
      }
    assert.equal(changedOutside, 0, 'pixels outside the eye regions changed');
    for (const p of pupils) {
      // The painted pupil's core: red before, no longer red-dominant after (default strength 70).
      let before = 0;
      let after = 0;
      let n = 0;
      for (let y = Math.ceil(p.y - p.r / 2); y <= p.y + p.r / 2; y++)
        for (let x = Math.ceil(p.x - p.r / 2); x <= p.x + p.r / 2; x++) {
          const i = (y * a.width + x) * 4;
          before += a.data[i]! - (a.data[i + 1]! + a.data[i + 2]!) / 2;
          after += b.data[i]! - (b.data[i + 1]! + b.data[i + 2]!) / 2;
          n++;
        }
      assert.ok(before / n > 150, `pupil at ${p.x},${p.y} was painted red`);
      assert.ok(after / n < 70, `pupil at ${p.x},${p.y} still red: ${after / n}`);
    }
  });

  it('format overrides the output format', async () => {
    const r = await run('red-eye-removal', sample(1), { format: 'webp', quality: 80 });
    assert.equal((await sharp(r.file!).metadata()).format, 'webp');
  });
});

describe('smart-crop', () => {
  it('face mode frames the faces (closeup of a one-person crop)', async () => {
    const one = path.join(dir, 'one.jpg');
    await sharp(sample(1)).extract({ left: 250, top: 150, width: 500, height: 700 }).toFile(one);
    const r = await run('smart-crop', one, { mode: 'face', facePreset: 'closeup', width: 300, height: 300 });
    assert.equal(r.data?.faces, 1);
    const meta = await sharp(r.file!).metadata();
    assert.deepEqual([meta.width, meta.height], [300, 300]);
    // The crop holds the face (centre near 252,323 in this cut-out) and is about 1.8 face heights tall.
    const crop = r.data?.crop as { x: number; y: number; width: number; height: number };
    const [fx, fy] = [252, 323];
    assert.ok(fx > crop.x && fx < crop.x + crop.width && fy > crop.y && fy < crop.y + crop.height, JSON.stringify(crop));
    assert.ok(crop.height > 300 && crop.height < 560, JSON.stringify(crop));
  });

  it('face mode with every face of a group, head-shoulders at the preset aspect', async () => {
    const r = await run('smart-crop', sample(4), { mode: 'face' });
    assert.equal(r.data?.faces, 4);
    const crop = r.data?.crop as Box;
    for (const [x, y] of CENTRES[4]!) assert.ok(inside(x, y, [crop]), `face at ${x},${y} outside the crop ${JSON.stringify(crop)}`);
  });

  it('subject mode (attention) gives width×height; the legacy mode attention is the same', async () => {
    const r = await run('smart-crop', sample(1), { mode: 'attention', width: 400, height: 300, quality: 80 });
    assert.equal(r.data?.mode, 'subject');
    const meta = await sharp(r.file!).metadata();
    assert.deepEqual([meta.width, meta.height], [400, 300]);
  });

  it('trim mode removes a plain border, then padToSquare and targetSize', async () => {
    const framed = path.join(dir, 'framed.png');
    await sharp({ create: { width: 300, height: 200, channels: 3, background: '#ffffff' } })
      .composite([{ input: { create: { width: 100, height: 50, channels: 3, background: '#203040' } }, left: 120, top: 70 }])
      .png()
      .toFile(framed);
    const r = await run('smart-crop', framed, { mode: 'content', padToSquare: true, padColor: '#ff0000', targetSize: 64 });
    assert.deepEqual(r.data?.crop, { x: 120, y: 70, width: 100, height: 50 });
    const { data, info } = await sharp(r.file!).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height], [64, 64]);
    assert.deepEqual([...data.subarray(0, 3)], [255, 0, 0], 'square padding in padColor');
    const mid = (32 * 64 + 32) * 3;
    assert.ok(data[mid]! < 60 && data[mid + 2]! < 90, 'the content in the middle');
  });
});

describe('content-aware-resize protectFaces', () => {
  /** How many face-box rows of `src` appear unbroken (same pixels, same row) in `out`: vertical seams keep rows in place. */
  async function intactRows(src: string, out: string, boxes: Box[]): Promise<number[]> {
    const a = await rgba(src);
    const b = await rgba(out);
    return boxes.map((bx) => {
      let intact = 0;
      const x0 = bx.x + 2;
      const x1 = bx.x + bx.width - 2;
      for (let y = bx.y + 2; y < bx.y + bx.height - 2; y++) {
        const seg = a.data.subarray((y * a.width + x0) * 4, (y * a.width + x1) * 4);
        const row = b.data.subarray(y * b.width * 4, (y + 1) * b.width * 4);
        if (row.indexOf(seg) >= 0 && row.indexOf(seg) % 4 === 0) intact++;
      }
      return intact / (bx.height - 4);
    });
  }

  it('with the bundle, seams go round the faces (and without protection they do not)', async () => {
    const small = path.join(dir, 'group-small.png');
    await sharp(sample(1)).resize(640).png().toFile(small);
    const r = await run('content-aware-resize', small, { width: 460, protectFaces: true });
    const pf = r.data?.protectFaces as Record<string, unknown>;
    assert.equal(pf.applied, true);
    assert.equal(pf.faces, 3);
    assert.equal(r.data?.model, 'face-ssd-mobilenetv1');
    assert.match(String(r.data?.provider), /^tfjs-/);
    const boxes = pf.boxes as Box[];
    const kept = await intactRows(small, r.file!, boxes);
    for (const [i, k] of kept.entries()) assert.equal(k, 1, `face ${i}: ${Math.round(k * 100)}% of its rows intact`);
    const plain = await run('content-aware-resize', small, { width: 460 });
    const cut = await intactRows(small, plain.file!, boxes);
    assert.ok(
      cut.some((k) => k < 0.9),
      `without protection some face is cut: ${cut.map((k) => k.toFixed(2))}`,
    );
  });
});

describe('without the bundle', () => {
  // needs.bundlesBySetting: only smart-crop's face mode needs face detection.
  it('smart-crop subject and trim modes run; face mode exits 4 with FEATURE_NOT_INSTALLED naming the mode', async () => {
    const empty = tempDir('kiln-nofaces-crop-');
    for (const mode of ['subject', 'trim', 'attention', 'content']) {
      const r = await runKept(empty, empty, 'smart-crop', sample(1), { mode, width: 200, height: 100 });
      const meta = await sharp(r.file!).metadata();
      assert.ok(meta.width! > 0 && meta.width! <= 1920, `${mode}: ${meta.width}`);
    }
    const res = await kiln(['smart-crop', sample(1), '--mode', 'face', '-o', path.join(empty, 'face.jpg')], {
      env: { KILN_DATA_DIR: empty },
    });
    assert.equal(res.code, 4, res.stderr);
    assert.match(res.stderr, /smart-crop \(mode face\) needs the feature bundle face-detection.*`kiln features install smart-crop`/);
  });

  it('kiln blur-faces exits 4 with FEATURE_NOT_INSTALLED naming the install command', async () => {
    const empty = tempDir('kiln-nofaces-');
    const out = path.join(empty, 'out.jpg');
    const res = await kiln(['blur-faces', sample(1), '-o', out], { env: { KILN_DATA_DIR: empty } });
    assert.equal(res.code, 4, res.stderr);
    assert.match(res.stderr, /needs the feature bundle face-detection.*`kiln features install blur-faces`/);
    const json = await kiln(['blur-faces', sample(1), '-o', out, '--json'], { env: { KILN_DATA_DIR: empty } });
    assert.equal(json.code, 4);
    const err = JSON.parse(json.stdout).error;
    assert.equal(err.code, 'FEATURE_NOT_INSTALLED');
    assert.equal(err.details.install.cli, 'kiln features install blur-faces');
  });
});
