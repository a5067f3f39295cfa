import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { COLLAGE_TEMPLATE_IDS, COLLAGE_TEMPLATES, UNIT } from '../../../src/tools/image/_shared/collage-templates.js';
import { FRAMES } from '../../../src/tools/image/_shared/device-frames.js';
import { kiln } from '../../helpers/cli.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { near, pixel, runB, solid, unzip } from './b-helpers.js';

const dir = tempDir();
const RED = { r: 255, g: 0, b: 0 };
const GREEN = { r: 0, g: 255, b: 0 };
const BLUE = { r: 0, g: 0, b: 255 };
const YELLOW = { r: 255, g: 255, b: 0 };
const rgba = (c: { r: number; g: number; b: number }, a = 255) => [c.r, c.g, c.b, a];

describe('collage', () => {
  it('has 25+ templates, each tiling its grid exactly with as many cells as its leading digit', () => {
    assert.ok(COLLAGE_TEMPLATE_IDS.length >= 25, String(COLLAGE_TEMPLATE_IDS.length));
    for (const id of COLLAGE_TEMPLATE_IDS) {
      const t = COLLAGE_TEMPLATES[id]!;
      assert.equal(t.cells.length, Number(id.split('-')[0]), id);
      const seen = new Set<string>();
      for (const [c, r, cs, rs] of t.cells)
        for (let y = r; y < r + rs; y++)
          for (let x = c; x < c + cs; x++) {
            assert.ok(x < t.cols && y < t.rows, `${id} out of grid`);
            assert.ok(!seen.has(`${x},${y}`), `${id} overlaps at ${x},${y}`);
            seen.add(`${x},${y}`);
          }
      assert.equal(seen.size, t.cols * t.rows, `${id} leaves holes`);
    }
  });
  it('4-grid puts each image in its cell with gaps of the background colour', async () => {
    const files = await Promise.all([RED, GREEN, BLUE, YELLOW].map((c, i) => solid(dir, `c${i}.png`, 80, 60, c)));
    const r = await runB(dir, 'collage', files, { template: '4-grid', gap: 10, backgroundColor: '#000000' });
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height], [2 * UNIT + 30, 2 * UNIT + 30]);
    const q = UNIT / 2;
    assert.deepEqual(await pixel(r.file!, 10 + q, 10 + q), rgba(RED));
    assert.deepEqual(await pixel(r.file!, 20 + UNIT + q, 10 + q), rgba(GREEN));
    assert.deepEqual(await pixel(r.file!, 10 + q, 20 + UNIT + q), rgba(BLUE));
    assert.deepEqual(await pixel(r.file!, 20 + UNIT + q, 20 + UNIT + q), rgba(YELLOW));
    assert.deepEqual(await pixel(r.file!, 5, 5), [0, 0, 0, 255]);
    assert.deepEqual(await pixel(r.file!, 10 + UNIT + 5, q), [0, 0, 0, 255]);
  });
  it('a large cell spans its units plus the gaps between them; rounded cells on a transparent canvas', async () => {
    const files = await Promise.all([RED, GREEN, BLUE].map((c, i) => solid(dir, `l${i}.png`, 50, 50, c)));
    const r = await runB(dir, 'collage', files, { template: '3-left-large', gap: 8, backgroundColor: 'transparent', borderRadius: 40 });
    const cells = r.data!.cells as { left: number; top: number; width: number; height: number }[];
    assert.deepEqual(cells[0], { left: 8, top: 8, width: UNIT, height: 2 * UNIT + 8 });
    assert.equal((await pixel(r.file!, 9, 9))[3], 0, 'rounded corner is transparent');
    assert.deepEqual(await pixel(r.file!, 8 + UNIT / 2, 8 + UNIT), rgba(RED));
  });
  it('checks the file count against the template and rejects unknown templates', async () => {
    const a = await solid(dir, 'one.png', 10, 10, RED);
    await assert.rejects(
      runB(dir, 'collage', [a, a], { template: '3-h-equal' }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /3 cells but 2/.test(e.message),
    );
    await assert.rejects(
      runB(dir, 'collage', [a], { template: 'hexagon' }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /Known: 1-single/.test(e.message),
    );
    const ok = await runB(dir, 'collage', [a, a, a], { template: '2-h-equal' });
    assert.equal(ok.data!.ignored, 1);
  });
});

describe('stitch', () => {
  it('horizontal: widths add up with gaps, height of the tallest, cross-axis alignment', async () => {
    const a = await solid(dir, 'sa.png', 100, 50, RED);
    const b = await solid(dir, 'sb.png', 60, 80, BLUE);
    const r = await runB(dir, 'stitch', [a, b], { gap: 10, alignment: 'end', backgroundColor: '#00ff00' });
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height], [170, 80]);
    assert.deepEqual(await pixel(r.file!, 5, 10), rgba(GREEN));
    assert.deepEqual(await pixel(r.file!, 5, 40), rgba(RED));
    assert.deepEqual(await pixel(r.file!, 105, 40), rgba(GREEN));
    assert.deepEqual(await pixel(r.file!, 115, 5), rgba(BLUE));
  });
  it('vertical and grid', async () => {
    const a = await solid(dir, 'va.png', 100, 50, RED);
    const b = await solid(dir, 'vb.png', 60, 80, BLUE);
    const v = await runB(dir, 'stitch', [a, b], { direction: 'vertical', alignment: 'start' });
    assert.deepEqual([(await sharp(v.file!).metadata()).width, (await sharp(v.file!).metadata()).height], [100, 130]);
    assert.deepEqual(await pixel(v.file!, 5, 60), rgba(BLUE));
    assert.deepEqual(await pixel(v.file!, 90, 60), [255, 255, 255, 255]);
    const g = await runB(dir, 'stitch', [a, b, b, a, a], { direction: 'grid', gap: 4 });
    assert.deepEqual([g.data!.columns, g.data!.rows], [3, 2]);
    const gm = await sharp(g.file!).metadata();
    assert.deepEqual([gm.width, gm.height], [100 + 60 + 100 + 8, 80 + 50 + 4]);
  });
});

describe('split', () => {
  it('grid: rows × cols tiles of equal size in a ZIP', async () => {
    const src = await makeImage(dir, 'sp.png', 300, 200);
    const r = await runB(dir, 'split', [src], { rows: 2, cols: 3 });
    const tiles = await unzip(r.file!);
    assert.equal(tiles.length, 6);
    for (const t of tiles) {
      const m = await sharp(t.data).metadata();
      assert.deepEqual([m.width, m.height, m.format], [100, 100, 'png']);
    }
    const first = tiles.find((t) => t.name.endsWith('-r1-c1.png'))!;
    const last = tiles.find((t) => t.name.endsWith('-r2-c3.png'))!;
    assert.deepEqual(await pixel(first.data, 50, 50), [255, 0, 0, 255]);
    assert.deepEqual(await pixel(last.data, 50, 50), [0, 0, 255, 255]);
  });
  it('rows, cols and fixed tile sizes with a remainder', async () => {
    const src = await makeImage(dir, 'sp2.jpg', 300, 200);
    const rows = await unzip((await runB(dir, 'split', [src], { mode: 'rows', rows: 4 })).file!);
    assert.equal(rows.length, 4);
    assert.deepEqual(
      [
        (await sharp(rows[0]!.data).metadata()).width,
        (await sharp(rows[0]!.data).metadata()).height,
        (await sharp(rows[0]!.data).metadata()).format,
      ],
      [300, 50, 'jpeg'],
    );
    const fixed = await runB(dir, 'split', [src], { tileWidth: 128, tileHeight: 150 });
    assert.deepEqual(fixed.data!.tileSizes, { widths: [128, 128, 44], heights: [150, 50] });
    assert.equal((await unzip(fixed.file!)).length, 6);
    const one = await unzip((await runB(dir, 'split', [src], { rows: 1, cols: 1 })).file!);
    assert.equal(one.length, 1);
    await assert.rejects(runB(dir, 'split', [src], { rows: 101 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    const tiny = await makeImage(dir, 'tiny.png', 5, 5);
    await assert.rejects(runB(dir, 'split', [tiny], { rows: 10 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
});

describe('border', () => {
  it('solid border keeps the input format and adds 2×width', async () => {
    const src = await makeImage(dir, 'b.jpg', 100, 50);
    const r = await runB(dir, 'border', [src], { width: 10, color: '#00ff00' });
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height, m.format], [120, 70, 'jpeg']);
    assert.ok(near(await pixel(r.file!, 3, 3), [0, 255, 0, 255], 12));
    assert.ok(near(await pixel(r.file!, 30, 35), [255, 0, 0, 255], 12));
  });
  it('padding is a white mat; radius and shadow give a transparent PNG', async () => {
    const src = await makeImage(dir, 'b2.png', 100, 50);
    const r = await runB(dir, 'border', [src], { width: 6, padding: 5, borderRadius: 20, color: '#0000ff' });
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height, m.format], [122, 72, 'png']);
    assert.equal((await pixel(r.file!, 0, 0))[3], 0);
    assert.deepEqual(await pixel(r.file!, 60, 2), [0, 0, 255, 255]);
    assert.deepEqual(await pixel(r.file!, 60, 8), [255, 255, 255, 255]);
    const sh = await runB(dir, 'border', [src], { width: 6, shadow: true });
    const sm = await sharp(sh.file!).metadata();
    assert.ok(sm.width! > 112 && sm.height! > 62 && sm.format === 'png');
  });
  it('gradient and pattern borders vary along the border', async () => {
    const src = await makeImage(dir, 'b3.png', 100, 100);
    for (const style of ['gradient', 'pattern']) {
      const r = await runB(dir, 'border', [src], { width: 20, style, color: '#000000' });
      const samples = await Promise.all(
        [
          [2, 2],
          [60, 5],
          [117, 117],
          [5, 80],
          [10, 10],
          [13, 6],
        ].map(([x, y]) => pixel(r.file!, x!, y!)),
      );
      assert.ok(new Set(samples.map((p) => p[0])).size > 1, `${style} ${JSON.stringify(samples)}`);
    }
  });
});

describe('circle-crop', () => {
  it('corners transparent, centre opaque, diameter = shorter side', async () => {
    const src = await makeImage(dir, 'cc.png', 200, 100);
    const r = await runB(dir, 'circle-crop', [src], {});
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height, m.format, m.channels], [100, 100, 'png', 4]);
    assert.equal((await pixel(r.file!, 2, 2))[3], 0);
    assert.equal((await pixel(r.file!, 97, 97))[3], 0);
    assert.equal((await pixel(r.file!, 50, 50))[3], 255);
    assert.equal((await pixel(r.file!, 50, 1))[3] > 200, true);
  });
  it('offset, zoom, ring, coloured background and output size', async () => {
    const src = await makeImage(dir, 'cc2.png', 200, 100);
    // Centred on the red left half at zoom 2: diameter 50, all red.
    const r = await runB(dir, 'circle-crop', [src], {
      zoom: 2,
      offsetX: 0.25,
      borderWidth: 4,
      borderColor: '#00ff00',
      background: '#0000ff',
      outputSize: 64,
    });
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height], [64, 64]);
    assert.deepEqual(await pixel(r.file!, 32, 32), [255, 0, 0, 255]);
    assert.ok(near(await pixel(r.file!, 32, 1), [0, 255, 0, 255], 40));
    assert.deepEqual(await pixel(r.file!, 1, 1), [0, 0, 255, 255]);
    assert.deepEqual(r.data!.crop, { left: 25, top: 25, width: 50, height: 50 });
  });
});

describe('image-pad', () => {
  it('pads to 1:1 and 16:9 with a colour, centred', async () => {
    const src = await makeImage(dir, 'p.jpg', 200, 100);
    const r = await runB(dir, 'image-pad', [src], { color: '#00ff00' });
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height, m.format], [200, 200, 'jpeg']);
    assert.ok(near(await pixel(r.file!, 100, 10), [0, 255, 0, 255], 12));
    assert.ok(near(await pixel(r.file!, 20, 100), [255, 0, 0, 255], 12));
    const wide = await runB(dir, 'image-pad', [await makeImage(dir, 'sq.png', 90, 90)], { target: '16:9' });
    assert.deepEqual([(await sharp(wide.file!).metadata()).width, (await sharp(wide.file!).metadata()).height], [160, 90]);
  });
  it('custom ratio, padding percent, transparent and blur fills', async () => {
    const src = await makeImage(dir, 'p2.jpg', 100, 100);
    const t = await runB(dir, 'image-pad', [src], { target: 'custom', ratioW: 3, ratioH: 1, background: 'transparent', padding: 10 });
    const m = await sharp(t.file!).metadata();
    assert.deepEqual([m.width, m.height, m.format], [360, 120, 'png']);
    assert.equal((await pixel(t.file!, 5, 60))[3], 0);
    assert.equal((await pixel(t.file!, 180, 60))[3], 255);
    const b = await runB(dir, 'image-pad', [src], { target: '9:16', background: 'blur' });
    const bm = await sharp(b.file!).metadata();
    assert.deepEqual([bm.width, bm.height], [100, 178]);
    const top = await pixel(b.file!, 50, 5);
    assert.ok(top[0]! > 30 && top[2]! > 30, `blurred fill mixes red and blue ${top}`);
  });
});

describe('sprite-sheet', () => {
  it('packs frames in a grid and returns atlas coordinates', async () => {
    const colors = [RED, GREEN, BLUE, YELLOW, RED];
    const files = await Promise.all(colors.map((c, i) => solid(dir, `f${i}.png`, 20 + i * 5, 30, c)));
    const r = await runB(dir, 'sprite-sheet', files, { columns: 2, padding: 4, background: 'transparent' });
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height, m.format], [40 * 2 + 4, 30 * 3 + 8, 'png']);
    const frames = r.data!.frames as Record<string, { frame: { x: number; y: number; w: number; h: number } }>;
    assert.deepEqual(Object.keys(frames), ['f0.png', 'f1.png', 'f2.png', 'f3.png', 'f4.png']);
    assert.deepEqual(frames['f3.png']!.frame, { x: 44, y: 34, w: 35, h: 30 });
    for (const [i, name] of Object.keys(frames).entries()) {
      const f = frames[name]!.frame;
      assert.deepEqual(await pixel(r.file!, f.x + f.w - 1, f.y + f.h - 1), rgba(colors[i]!));
    }
    assert.equal((await pixel(r.file!, 41, 1))[3], 0);
    const j = await runB(dir, 'sprite-sheet', files.slice(0, 2), { format: 'jpeg', quality: 80 });
    assert.equal((await sharp(j.file!).metadata()).format, 'jpeg');
    await assert.rejects(runB(dir, 'sprite-sheet', files.slice(0, 1), {}), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
});

describe('beautify', () => {
  it('pads a screenshot on the default gradient with rounded corners', async () => {
    const src = await makeImage(dir, 'shot.png', 200, 100);
    const r = await runB(dir, 'beautify', [src], {});
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height, m.format], [328, 228, 'png']);
    assert.ok(near(await pixel(r.file!, 0, 0), [0x66, 0x7e, 0xea, 255], 10));
    assert.ok(near(await pixel(r.file!, 327, 227), [0x76, 0x4b, 0xa2, 255], 10));
    assert.deepEqual(await pixel(r.file!, 100, 114), [255, 0, 0, 255]);
    assert.notDeepEqual(await pixel(r.file!, 64, 64), [255, 0, 0, 255]);
  });
  it('draws every frame, fits social sizes and writes the chosen format', async () => {
    const src = await makeImage(dir, 'shot2.png', 240, 160);
    for (const frame of FRAMES) {
      const r = await runB(dir, 'beautify', [src], {
        frame,
        padding: 20,
        shadowPreset: 'medium',
        backgroundType: 'solid',
        gradientStops: [
          { color: '#102030', position: 0 },
          { color: '#ffffff', position: 100 },
        ],
      });
      const m = await sharp(r.file!).metadata();
      if (frame === 'none') assert.deepEqual([m.width, m.height], [280, 200]);
      else assert.ok(m.width! >= 280 && m.height! > 200, `${frame} ${m.width}x${m.height}`);
      assert.deepEqual(await pixel(r.file!, 1, 1), [0x10, 0x20, 0x30, 255], frame);
    }
    const tw = await runB(dir, 'beautify', [src], {
      socialPreset: 'twitter',
      frame: 'browser-dark',
      outputFormat: 'jpeg',
      watermarkText: 'kiln <test>',
    });
    const tm = await sharp(tw.file!).metadata();
    assert.deepEqual([tm.width, tm.height, tm.format], [1600, 900, 'jpeg']);
    const story = await runB(dir, 'beautify', [src], {
      socialPreset: 'instagram-story',
      frame: 'iphone',
      outputFormat: 'webp',
      shadowPreset: 'dramatic',
    });
    const sm = await sharp(story.file!).metadata();
    assert.deepEqual([sm.width, sm.height, sm.format], [1080, 1920, 'webp']);
  });
  it('image and transparent backgrounds; radial gradient', async () => {
    const src = await makeImage(dir, 'shot3.png', 100, 60);
    const bg = await solid(dir, 'bg.png', 30, 30, GREEN);
    const r = await runB(dir, 'beautify', [src], { backgroundType: 'image', shadowPreset: 'none' }, { backgroundImage: [bg] });
    assert.deepEqual(await pixel(r.file!, 2, 2), rgba(GREEN));
    await assert.rejects(runB(dir, 'beautify', [src], { backgroundType: 'image' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    const t = await runB(dir, 'beautify', [src], { backgroundType: 'transparent', shadowPreset: 'none' });
    assert.equal((await pixel(t.file!, 2, 2))[3], 0);
    const rad = await runB(dir, 'beautify', [src], {
      backgroundType: 'radial-gradient',
      gradientStops: [
        { color: '#ffffff', position: 0 },
        { color: '#000000', position: 100 },
      ],
      shadowPreset: 'none',
    });
    const centreish = await pixel(rad.file!, 114, 10);
    const corner = await pixel(rad.file!, 1, 1);
    assert.ok(centreish[0]! > corner[0]!, `radial: ${centreish} vs ${corner}`);
    await assert.rejects(
      runB(dir, 'beautify', [src], { gradientStops: [{ color: '#fff', position: 0 }] }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
  });
});

describe('layout CLI', () => {
  it('stitch and collage take several positional inputs', async () => {
    const a = await solid(dir, 'cli-a.png', 40, 40, RED);
    const b = await solid(dir, 'cli-b.png', 40, 40, BLUE);
    const out = path.join(dir, 'cli-stitch.png');
    const r = await kiln(['stitch', a, b, '--gap', '2', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await sharp(out).metadata()).width, 82);
    const cout = path.join(dir, 'cli-collage.png');
    const c = await kiln(['collage', a, b, a, b, '--template', '4-grid', '--gap', '0', '-o', cout]);
    assert.equal(c.code, 0, c.stderr);
    assert.equal((await sharp(cout).metadata()).width, 2 * UNIT);
    const bad = await kiln(['collage', a, b, '--template', '4-grid', '-o', path.join(dir, 'no.png')]);
    assert.equal(bad.code, 2);
  });
  it('sprite-sheet --json prints the atlas', async () => {
    const a = await solid(dir, 'cli-s1.png', 10, 10, RED);
    const b = await solid(dir, 'cli-s2.png', 10, 10, BLUE);
    const r = await kiln(['sprite-sheet', a, b, '--columns', '1', '-o', path.join(dir, 'cli-sheet.png'), '--json']);
    assert.equal(r.code, 0, r.stderr);
    const line = JSON.parse(r.stdout.trim()) as { data: { frames: Record<string, { frame: { y: number } }> } };
    assert.equal(line.data.frames['cli-s2.png']!.frame.y, 10);
  });
});
