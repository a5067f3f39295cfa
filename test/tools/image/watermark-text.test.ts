import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { runTool, inputFile } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import type { KilnError } from '../../../src/core/errors.js';
import { fontFile, fontNames, listFontFamilies } from '../../../src/engines/fonts.js';
import { tempDir } from '../../helpers/fixtures.js';
import { kiln } from '../../helpers/cli.js';

const dir = tempDir();
const W = 240;
const H = 160;

async function white(name: string): Promise<string> {
  const p = path.join(dir, name);
  await sharp({ create: { width: W, height: H, channels: 3, background: '#ffffff' } })
    .png()
    .toFile(p);
  return p;
}

/** Count of changed (non-white) pixels in a rectangle. */
function changedIn(data: Buffer, ch: number, x0: number, y0: number, x1: number, y1: number): number {
  let n = 0;
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      const i = (y * W + x) * ch;
      if (data[i]! < 250 || data[i + 1]! < 250 || data[i + 2]! < 250) n++;
    }
  return n;
}

async function run(file: string, settings: Record<string, unknown>) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(getTool('watermark-text'), { files: [await inputFile(file)], extra: {} }, settings, {
      workDir: ws.dir,
      dataDir: dir,
    });
    const raw = await sharp(out.output!.path).raw().toBuffer({ resolveWithObject: true });
    return { data: raw.data, ch: raw.info.channels, w: raw.info.width, h: raw.info.height, result: out.data as Record<string, unknown> };
  } finally {
    await ws.dispose();
  }
}

describe('fonts', () => {
  it('finds real font files for families, weights and aliases', () => {
    const fams = listFontFamilies().map((f) => f.family);
    for (const f of ['DejaVu Sans', 'DejaVu Serif', 'DejaVu Sans Mono', 'Liberation Sans', 'Liberation Serif', 'Noto Sans'])
      assert.ok(fams.includes(f), f);
    assert.match(fontFile('sans-serif').file, /DejaVuSans\.ttf$/);
    assert.match(fontFile('DejaVu Sans', 'bold').file, /DejaVuSans-Bold\.ttf$/);
    assert.match(fontFile('liberation serif', 'bold', 'italic').file, /LiberationSerif-BoldItalic\.ttf$/);
    assert.equal(fontFile('Arial').family, 'Liberation Sans');
    assert.ok(fontNames().includes('monospace'));
    assert.throws(
      () => fontFile('No Such Font'),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /DejaVu Sans/.test(e.message),
    );
  });
});

describe('watermark-text', () => {
  it('draws text in the centre and leaves the rest untouched', async () => {
    const r = await run(await white('a.png'), { text: 'KILN', fontSize: 40, opacity: 100, color: '#ff0000' });
    assert.deepEqual([r.w, r.h], [W, H]);
    assert.ok(changedIn(r.data, r.ch, 70, 55, 170, 105) > 200, 'text area changed');
    assert.equal(changedIn(r.data, r.ch, 0, 0, W, 40) + changedIn(r.data, r.ch, 0, 120, W, H), 0, 'top and bottom bands unchanged');
    // Red text at full opacity: some pixel is pure-ish red.
    let red = false;
    for (let i = 0; i < r.data.length; i += r.ch) if (r.data[i]! > 200 && r.data[i + 1]! < 60) red = true;
    assert.ok(red);
    assert.equal(r.result.font, 'DejaVu Sans');
  });
  it('places text at a corner with opacity', async () => {
    const r = await run(await white('b.png'), {
      text: 'Hi',
      fontSize: 30,
      position: 'bottom-right',
      opacity: 50,
      font: 'Liberation Serif',
    });
    assert.ok(changedIn(r.data, r.ch, W / 2, H / 2, W, H) > 20);
    assert.equal(changedIn(r.data, r.ch, 0, 0, W, H / 2) + changedIn(r.data, r.ch, 0, 0, W / 2, H), 0);
    let darkest = 255;
    for (let i = 0; i < r.data.length; i += r.ch) darkest = Math.min(darkest, r.data[i]!);
    assert.ok(darkest > 100 && darkest < 160, `50% black on white is mid grey, got ${darkest}`);
  });
  it('tiles the text over the whole image, rotated', async () => {
    const r = await run(await white('c.png'), { text: 'DRAFT', fontSize: 16, tile: true, rotation: -30, opacity: 80 });
    for (const [x0, y0] of [
      [0, 0],
      [W / 2, 0],
      [0, H / 2],
      [W / 2, H / 2],
    ] as const)
      assert.ok(changedIn(r.data, r.ch, x0, y0, x0 + W / 2, y0 + H / 2) > 20, `quadrant ${x0},${y0}`);
  });
  it('shrinks text that is larger than the image and rejects unknown fonts', async () => {
    const r = await run(await white('d.png'), { text: 'A very long watermark line', fontSize: 200, opacity: 100 });
    assert.ok((r.result.textWidth as number) <= W && (r.result.textHeight as number) <= H, JSON.stringify(r.result));
    await assert.rejects(run(await white('e.png'), { text: 'x', font: 'Comic Nope' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(run(await white('e.png'), { text: '' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
  it('runs from the CLI with --tile', async () => {
    const src = await white('cli.png');
    const out = path.join(dir, 'cli-out.png');
    const r = await kiln(['watermark-text', src, '--text', '© kiln <&>', '--tile', '--font-size', '14', '--opacity', '100', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const raw = await sharp(out).raw().toBuffer({ resolveWithObject: true });
    assert.ok(
      changedIn(raw.data, raw.info.channels, 0, 0, W / 2, H / 2) > 10 && changedIn(raw.data, raw.info.channels, W / 2, H / 2, W, H) > 10,
    );
  });
});
