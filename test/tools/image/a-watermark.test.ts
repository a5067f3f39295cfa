import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { kiln } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/fixtures.js';
import { rawOf, runA, solid } from './a-helpers.js';

const dir = tempDir();

function countWhere(
  p: Awaited<ReturnType<typeof rawOf>>,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  f: (px: number[]) => boolean,
): number {
  let n = 0;
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (f(p.px(x, y))) n++;
  return n;
}

describe('watermark-image', () => {
  it('scales, places and blends the logo', async () => {
    const base = await solid(dir, 'base.png', 200, 100, () => [0, 0, 0]);
    const logo = await solid(dir, 'logo.png', 20, 10, () => [255, 255, 255]);
    const r = await runA('watermark-image', [base], { scale: 50, opacity: 100, position: 'top-left' }, { watermark: [logo] }, dir);
    const p = await rawOf(r.kept!);
    assert.deepEqual(r.data, { left: 3, top: 3, width: 100, height: 50 });
    assert.deepEqual(p.px(10, 10).slice(0, 3), [255, 255, 255]);
    assert.deepEqual(p.px(150, 80).slice(0, 3), [0, 0, 0]);
    const half = await rawOf((await runA('watermark-image', [base], {}, { watermark: [logo] }, dir)).kept!);
    const v = half.px(190, 90)[0]!;
    assert.ok(Math.abs(v - 128) <= 2, `50% opacity at bottom-right: ${v}`);
    await assert.rejects(runA('watermark-image', [base], {}), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
  it('CLI takes --watermark', async () => {
    const base = await solid(dir, 'cb.jpg', 100, 100, () => [0, 0, 0]);
    const logo = await solid(dir, 'cl.png', 10, 10, () => [255, 0, 0]);
    const out = path.join(dir, 'cli-wm.jpg');
    const res = await kiln(['watermark-image', base, '--watermark', logo, '--opacity', '100', '--position', 'center', '-o', out, '-q']);
    assert.equal(res.code, 0, res.stderr);
    const p = await rawOf(out);
    assert.ok(p.px(50, 50)[0]! > 200 && p.px(50, 50)[1]! < 60);
  });
});

describe('compose', () => {
  it('places the overlay at x/y with opacity and blend modes; clips at the edge', async () => {
    const base = await solid(dir, 'cbase.png', 50, 50, () => [100, 100, 100]);
    const ov = await solid(dir, 'cov.png', 30, 30, () => [200, 200, 200]);
    const p = await rawOf((await runA('compose', [base], { x: 40, y: 40 }, { overlay: [ov] }, dir)).kept!);
    assert.deepEqual([p.width, p.height], [50, 50]);
    assert.deepEqual(p.px(45, 45).slice(0, 3), [200, 200, 200]);
    assert.deepEqual(p.px(30, 30).slice(0, 3), [100, 100, 100]);
    const m = await rawOf((await runA('compose', [base], { blend: 'multiply' }, { overlay: [ov] }, dir)).kept!);
    assert.ok(Math.abs(m.px(5, 5)[0]! - Math.round((100 * 200) / 255)) <= 2, `multiply ${m.px(5, 5)}`);
    const o = await rawOf((await runA('compose', [base], { opacity: 50 }, { overlay: [ov] }, dir)).kept!);
    assert.ok(Math.abs(o.px(5, 5)[0]! - 150) <= 2);
    await assert.rejects(runA('compose', [base], { x: 60 }, { overlay: [ov] }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
  it('CLI takes --overlay', async () => {
    const base = await solid(dir, 'cc.png', 20, 20, () => [0, 0, 0]);
    const ov = await solid(dir, 'cd.png', 5, 5, () => [0, 255, 0]);
    const out = path.join(dir, 'cli-compose.png');
    const res = await kiln(['compose', base, '--overlay', ov, '--x', '10', '--y', '10', '-o', out, '-q']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual((await rawOf(out)).px(12, 12), [0, 255, 0, 255]);
  });
});

describe('text-overlay', () => {
  it('draws text in a box at x/y, and wraps long text within the image', async () => {
    const base = await solid(dir, 'tb.png', 300, 200, () => [0, 0, 0]);
    const r = await runA(
      'text-overlay',
      [base],
      { text: 'Hi', x: 10, y: 10, fontSize: 40, background: '#ff0000', padding: 10, color: '#ffffff' },
      {},
      dir,
    );
    const p = await rawOf(r.kept!);
    assert.deepEqual(p.px(12, 12).slice(0, 3), [255, 0, 0]);
    const box = r.data!.box as { width: number; height: number };
    assert.ok(
      countWhere(p, 20, 20, 10 + box.width - 10, 10 + box.height - 10, (q) => q[0]! > 200 && q[1]! > 200) > 20,
      'white glyph pixels',
    );
    assert.deepEqual(p.px(290, 190).slice(0, 3), [0, 0, 0]);
    const long = await runA(
      'text-overlay',
      [base],
      { text: 'a rather long sentence that cannot fit on one line of this image', fontSize: 30 },
      {},
      dir,
    );
    const lb = long.data!.box as { width: number; height: number };
    assert.ok(lb.width <= 300 && lb.height > 60, `wrapped box ${JSON.stringify(lb)}`);
    await assert.rejects(runA('text-overlay', [base], {}), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
});

describe('meme-generator', () => {
  it('template mode: outlined text in the template boxes, every font loads', async () => {
    const r = await runA(
      'meme-generator',
      [],
      {
        templateId: 'approve-reject',
        textBoxes: [
          { id: 'top', text: 'tests later' },
          { id: 'bottom', text: 'tests first, always, every single time' },
        ],
      },
      {},
      dir,
    );
    const p = await rawOf(r.kept!);
    assert.deepEqual([p.width, p.height], [700, 700]);
    const white = countWhere(p, 370, 20, 680, 330, (q) => q[0]! > 240 && q[1]! > 240 && q[2]! > 240);
    const black = countWhere(p, 370, 20, 680, 330, (q) => q[0]! < 20 && q[1]! < 20 && q[2]! < 20);
    assert.ok(white > 500 && black > 500, `fill ${white} and outline ${black}`);
    const placed = r.data!.placed as { fontSize: number; width: number }[];
    assert.ok(placed.every((b) => b.width <= 310));
    const widths = new Set<number>();
    for (const fontFamily of ['anton', 'bebas-neue', 'permanent-marker', 'montserrat', 'roboto', 'arial-black', 'comic-sans']) {
      const f = await runA(
        'meme-generator',
        [],
        { templateId: 'sign', fontFamily, fontSize: 40, textBoxes: [{ id: 'sign', text: 'Same words' }] },
        {},
        dir,
      );
      widths.add((f.data!.placed as { width: number }[])[0]!.width);
    }
    assert.ok(widths.size >= 6, `seven typefaces should render differently: ${[...widths]}`);
  });
  it('custom-image mode with a layout, template wins, and errors', async () => {
    const pic = await solid(dir, 'pic.jpg', 400, 300, () => [30, 90, 160]);
    const r = await runA(
      'meme-generator',
      [],
      { textLayout: 'bottom-only', textBoxes: [{ id: 'bottom', text: 'bottom text' }] },
      { file: [pic] },
      dir,
    );
    assert.equal(r.data!.mode, 'custom-image');
    const p = await rawOf(r.kept!);
    assert.deepEqual([p.width, p.height], [400, 300]);
    assert.ok(countWhere(p, 0, 225, 400, 300, (q) => q[0]! > 240 && q[1]! > 240) > 100);
    assert.equal(
      countWhere(p, 0, 0, 400, 150, (q) => q[0]! > 240 && q[1]! > 240),
      0,
    );
    const both = await runA('meme-generator', [], { templateId: 'classic' }, { file: [pic] });
    assert.equal(both.data!.mode, 'template');
    await assert.rejects(runA('meme-generator', [], {}), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(
      runA('meme-generator', [], { templateId: 'classic', textBoxes: [{ id: 'nope', text: 'x' }] }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /top, bottom/.test(e.message),
    );
    await assert.rejects(runA('meme-generator', [], { templateId: 'not-a-template' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
  it('CLI: --file custom image', async () => {
    const pic = await solid(dir, 'pic2.png', 200, 200, () => [0, 0, 0]);
    const out = path.join(dir, 'cli-meme.png');
    const res = await kiln(['meme-generator', '--file', pic, '--text-boxes', '[{"id":"top","text":"hello"}]', '-o', out, '-q']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal((await sharp(out).metadata()).width, 200);
  });
});
