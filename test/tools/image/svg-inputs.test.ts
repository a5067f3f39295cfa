/**
 * An SVG given to any image tool (not only svg-to-raster) is rendered sanitized: librsvg would otherwise
 * draw the local files its <image> elements name (those beside the SVG or below its folder).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { tempDir } from '../../helpers/fixtures.js';
import { pixel, runB } from './b-helpers.js';

const dir = tempDir();

/** A magenta PNG on disk and an SVG (white page) that names it by file:// URL and by relative path. */
async function leakySvg(): Promise<string> {
  const secret = path.join(dir, 'secret.png');
  await sharp({ create: { width: 8, height: 8, channels: 3, background: '#ff00ff' } })
    .png()
    .toFile(secret);
  const svg = path.join(dir, 'leaky.svg');
  writeFileSync(
    svg,
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="20">` +
      `<rect width="40" height="20" fill="#ffffff"/>` +
      `<image x="0" y="0" width="20" height="20" xlink:href="file://${secret}"/>` +
      `<image x="20" y="0" width="20" height="20" href="secret.png"/></svg>`,
  );
  return svg;
}

const isWhite = (p: number[]) => p[0]! > 240 && p[1]! > 240 && p[2]! > 240;

describe('SVG inputs of image tools', () => {
  it('border, stitch, adjust-colors and watermark-image render the SVG without the local files it names', async () => {
    const svg = await leakySvg();
    const runs = [
      await runB(dir, 'border', [svg], { width: 0 }),
      await runB(dir, 'stitch', [svg, svg], {}),
      await runB(dir, 'adjust-colors', [svg], { brightness: 1 }),
    ];
    for (const r of runs) {
      assert.ok(r.file);
      for (const x of [5, 25]) assert.ok(isWhite(await pixel(r.file, x, 5)), `${r.output!.name} at ${x}: ${await pixel(r.file, x, 5)}`);
    }
    const base = path.join(dir, 'base.png');
    await sharp({ create: { width: 40, height: 20, channels: 3, background: '#ffffff' } })
      .png()
      .toFile(base);
    const wm = await runB(dir, 'watermark-image', [base], { opacity: 100, scale: 100, position: 'center' }, { watermark: [svg] });
    for (const x of [5, 25]) assert.ok(isWhite(await pixel(wm.file!, x, 5)), `watermark-image at ${x}: ${await pixel(wm.file!, x, 5)}`);
  });
});
