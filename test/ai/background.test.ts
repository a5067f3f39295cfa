/**
 * The background tools on a real photo with the real ISNet bundle: face-api's sample4 (four women in
 * front of a plain lavender wall), 640 px wide. Points on the wall and on the people are pinned and
 * checked on the decoded output.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { KilnError } from '../../src/core/errors.js';
import { createWorkspace } from '../../src/core/workspace.js';
import { getTool } from '../../src/tools/index.js';
import { inputFile, runTool, type RunOutcome } from '../../src/tools/run-tool.js';
import { kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { installForTest } from './install-helper.js';
import { samplePhoto } from './photos.js';

const dir = tempDir('kiln-ai-bg-');
const dataDir = path.join(dir, 'data');
let photo = '';
let original: Raw;

/** Lavender wall: corners and gaps between the heads. */
const WALL: [number, number][] = [
  [10, 10],
  [30, 30],
  [60, 15],
  [330, 15],
  [560, 20],
  [10, 300],
];
/** Four faces, then jeans, jeans, dress, skirt. */
const PEOPLE: [number, number][] = [
  [115, 100],
  [245, 65],
  [365, 100],
  [450, 95],
  [140, 330],
  [240, 400],
  [370, 350],
  [520, 350],
];
const FACES = PEOPLE.slice(0, 4);

interface Raw {
  data: Buffer;
  width: number;
  height: number;
  channels: number;
  format?: string;
}

async function decode(file: string): Promise<Raw> {
  const meta = await sharp(file).metadata();
  const { data, info } = await sharp(file).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels, format: meta.format };
}

function px(r: Raw, [x, y]: [number, number]): number[] {
  const i = (y * r.width + x) * r.channels;
  return [...r.data.subarray(i, i + r.channels)];
}

function near(a: number[], b: number[], tol: number): boolean {
  return a.slice(0, 3).every((v, i) => Math.abs(v - b[i]!) <= tol);
}

async function run(id: string, settings: Record<string, unknown>, extra: Record<string, string> = {}): Promise<RunOutcome & { out: Raw }> {
  const ws = await createWorkspace();
  try {
    const ex: Record<string, Awaited<ReturnType<typeof inputFile>>[]> = {};
    for (const [k, v] of Object.entries(extra)) ex[k] = [await inputFile(v)];
    const r = await runTool(getTool(id), { files: [await inputFile(photo)], extra: ex }, settings, { workDir: ws.dir, dataDir });
    const keep = path.join(mkdtempSync(path.join(dir, 'out-')), r.output!.name);
    cpSync(r.output!.path, keep);
    return { ...r, out: await decode(keep) };
  } finally {
    await ws.dispose();
  }
}

/** Mean absolute difference between neighbouring pixels (detail) over the wall's top band. */
function wallDetail(r: Raw): number {
  let sum = 0;
  let n = 0;
  for (let y = 2; y < 40; y++)
    for (let x = 2; x < 60; x++)
      for (let c = 0; c < 3; c++) {
        sum += Math.abs(px(r, [x, y])[c]! - px(r, [x + 1, y])[c]!) + Math.abs(px(r, [x, y])[c]! - px(r, [x, y + 1])[c]!);
        n++;
      }
  return sum / n;
}

before(async () => {
  await installForTest('background-removal', dataDir);
  photo = await samplePhoto(dir, 4);
  original = await decode(photo);
});

describe('remove-background', () => {
  it('makes the wall transparent and keeps the people opaque, with run data', async () => {
    const r = await run('remove-background', {});
    assert.equal(r.out.format, 'png');
    assert.equal(r.out.channels, 4);
    assert.deepEqual([r.out.width, r.out.height], [original.width, original.height]);
    for (const p of WALL) assert.ok(px(r.out, p)[3]! < 10, `wall ${p} alpha ${px(r.out, p)[3]}`);
    for (const p of PEOPLE) assert.ok(px(r.out, p)[3]! > 245, `person ${p} alpha ${px(r.out, p)[3]}`);
    for (const p of FACES) assert.ok(near(px(r.out, p), px(original, p), 2), `face colour kept at ${p}`);
    const d = r.data!;
    assert.equal(d.model, 'isnet');
    assert.equal(d.device, 'cpu');
    assert.equal(d.provider, 'CPUExecutionProvider');
    assert.ok((d.foregroundRatio as number) > 0.4 && (d.foregroundRatio as number) < 0.85, `foregroundRatio ${d.foregroundRatio}`);
  });

  it('backgroundType color fills the wall with the colour and keeps the faces', async () => {
    const r = await run('remove-background', { backgroundType: 'color', backgroundColor: '#10c040' });
    assert.equal(r.out.channels, 3);
    for (const p of WALL) assert.ok(near(px(r.out, p), [0x10, 0xc0, 0x40], 4), `wall ${p} ${px(r.out, p)}`);
    for (const p of FACES) assert.ok(near(px(r.out, p), px(original, p), 3), `face ${p}`);
  });

  it('backgroundType gradient runs from gradientColor1 to gradientColor2 along gradientAngle', async () => {
    const r = await run('remove-background', {
      backgroundType: 'gradient',
      gradientColor1: '#ff0000',
      gradientColor2: '#0000ff',
      gradientAngle: 90,
      outputFormat: 'webp',
    });
    assert.equal(r.out.format, 'webp');
    const left = px(r.out, [10, 10]);
    const right = px(r.out, [560, 20]);
    assert.ok(left[0]! > 220 && left[2]! < 40, `left is red: ${left}`);
    assert.ok(right[2]! > 180 && right[0]! < 70, `right is blue: ${right}`);
    const mid = px(r.out, [330, 15]);
    assert.ok(Math.abs(mid[0]! - mid[2]!) < 60, `middle is a mix: ${mid}`);
  });

  it('backgroundType blur blurs the wall and keeps the people sharp', async () => {
    const r = await run('remove-background', { backgroundType: 'blur', blurIntensity: 100 });
    assert.ok(wallDetail(r.out) < wallDetail(original) * 0.6, `detail ${wallDetail(original)} -> ${wallDetail(r.out)}`);
    for (const p of PEOPLE) assert.ok(near(px(r.out, p), px(original, p), 3), `person ${p}`);
  });

  it('backgroundType image uses the backgroundImage file; shadowEnabled darkens the background beside the subject', async () => {
    const bg = path.join(dir, 'bg.png');
    await sharp({ create: { width: 300, height: 200, channels: 3, background: '#e0e0e0' } })
      .png()
      .toFile(bg);
    const plain = await run('remove-background', { backgroundType: 'image' }, { backgroundImage: bg });
    for (const p of WALL) assert.ok(near(px(plain.out, p), [0xe0, 0xe0, 0xe0], 3), `wall ${p}`);
    const shadowed = await run(
      'remove-background',
      { backgroundType: 'image', shadowEnabled: true, shadowOpacity: 100 },
      { backgroundImage: bg },
    );
    let darker = 0;
    for (let i = 0; i < plain.out.data.length; i++) if (shadowed.out.data[i]! < plain.out.data[i]! - 20) darker++;
    assert.ok(darker > 1000, `shadow pixels: ${darker}`);
    // Far from the subject nothing changes.
    assert.ok(near(px(shadowed.out, [10, 10]), [0xe0, 0xe0, 0xe0], 3));
    await assert.rejects(run('remove-background', { backgroundType: 'image' }), (e: KilnError) => {
      assert.equal(e.code, 'VALIDATION_ERROR');
      assert.match(e.message, /backgroundImage/);
      return true;
    });
  });

  it('model isnet-small with edgeRefine 3 and decontaminate as AVIF', async () => {
    const r = await run('remove-background', { model: 'isnet-small', edgeRefine: 3, decontaminate: true, outputFormat: 'avif' });
    assert.equal(r.out.format, 'heif');
    assert.equal(r.data!.model, 'isnet-small');
    for (const p of WALL) assert.ok(px(r.out, p)[3]! < 10, `wall ${p}`);
    for (const p of PEOPLE) assert.ok(px(r.out, p)[3]! > 245, `person ${p}`);
  });

  it('refuses an unknown model, listing the ones it has', async () => {
    await assert.rejects(run('remove-background', { model: 'u2net' }), (e: KilnError) => {
      assert.equal(e.code, 'VALIDATION_ERROR');
      assert.match(e.message, /isnet, .*isnet-small/);
      return true;
    });
  });
});

describe('background-replace', () => {
  it('fills with the colour, and with a feathered top-to-bottom gradient', async () => {
    const c = await run('background-replace', { color: '#2040ff' });
    for (const p of WALL) assert.ok(near(px(c.out, p), [0x20, 0x40, 0xff], 4), `wall ${p}`);
    for (const p of FACES) assert.ok(near(px(c.out, p), px(original, p), 3), `face ${p}`);
    const g = await run('background-replace', {
      backgroundType: 'gradient',
      gradientColor1: '#000000',
      gradientColor2: '#ffffff',
      feather: 10,
      format: 'webp',
    });
    assert.equal(g.out.format, 'webp');
    assert.ok(px(g.out, [10, 10])[0]! < px(g.out, [10, 300])[0]! - 60, 'darker at the top than lower down');
  });
});

describe('blur-background', () => {
  it('blurs the wall and leaves the people as they were', async () => {
    const r = await run('blur-background', { intensity: 80 });
    assert.equal(r.out.format, 'png');
    assert.ok(wallDetail(r.out) < wallDetail(original) * 0.6, `detail ${wallDetail(original)} -> ${wallDetail(r.out)}`);
    for (const p of PEOPLE) assert.ok(near(px(r.out, p), px(original, p), 3), `person ${p}`);
    assert.equal(r.data!.model, 'isnet');
  });
});

describe('transparency-fixer', () => {
  it('turns a baked-in checkerboard into real transparency', async () => {
    // A "fake transparent" PNG: the cut-out people flattened onto a grey/white checkerboard.
    const cut = await run('remove-background', {});
    const { width: w, height: h } = cut.out;
    const board = Buffer.alloc(w * h * 3);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) board.fill(((x >> 4) + (y >> 4)) % 2 ? 0xcc : 0xff, (y * w + x) * 3, (y * w + x) * 3 + 3);
    const fake = path.join(dir, 'fake.png');
    await sharp(board, { raw: { width: w, height: h, channels: 3 } })
      .composite([{ input: cut.out.data, raw: { width: w, height: h, channels: 4 } }])
      .png()
      .toFile(fake);
    const savedPhoto = photo;
    photo = fake;
    try {
      const r = await run('transparency-fixer', { removeWatermark: true });
      assert.equal(r.out.channels, 4);
      assert.equal(r.data!.medianFilter, 3);
      for (const p of WALL) assert.ok(px(r.out, p)[3]! < 10, `board ${p} alpha ${px(r.out, p)[3]}`);
      for (const p of PEOPLE) assert.ok(px(r.out, p)[3]! > 245, `person ${p} alpha ${px(r.out, p)[3]}`);
    } finally {
      photo = savedPhoto;
    }
  });
});

describe('without the bundle', () => {
  it('kiln remove-background exits 4 and names the install command', async () => {
    const empty = path.join(dir, 'empty-data');
    const r = await kiln(['remove-background', photo, '-o', path.join(dir, 'x.png')], { env: { KILN_DATA_DIR: empty } });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /kiln features install remove-background/);
  });
});
