/**
 * An opaque PNG stays opaque: tools that draw on an RGBA canvas or work on RGBA pixels (border, vignette,
 * captions, stitch…) wrote every result with an alpha channel, a larger file that says it may be
 * transparent when nothing is. The alpha channel now goes out only when some pixel uses it or the input
 * had one; a new composition of several pictures (stitch, collage) has it only when some pixel uses it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { tempDir } from '../../helpers/fixtures.js';
import { runA, solid } from './a-helpers.js';

const dir = tempDir();

/** A 40×30 opaque RGB PNG (no alpha channel), with a pattern so filters have something to do. */
async function opaquePng(name = 'photo.png'): Promise<string> {
  const p = `${dir}/${name}`;
  const raw = Buffer.alloc(40 * 30 * 3);
  for (let i = 0; i < 40 * 30; i++) raw.set([(i * 7) % 256, 90, (i * 3) % 256], i * 3);
  await sharp(raw, { raw: { width: 40, height: 30, channels: 3 } })
    .png()
    .toFile(p);
  return p;
}

async function channelsOf(file: string) {
  const m = await sharp(file).metadata();
  return { channels: m.channels, hasAlpha: m.hasAlpha, format: m.format };
}

describe('opaque inputs give opaque outputs', () => {
  it('border, vignette, pixelate, duotone, color-blindness, replace-color, watermark-text, text-overlay, image-enhancement write no alpha', async () => {
    const src = await opaquePng();
    for (const [tool, settings] of [
      ['border', { width: 4, color: '#ff0000' }],
      ['border', { width: 4, style: 'gradient', padding: 3 }],
      ['vignette', {}],
      ['pixelate', { blockSize: 5 }],
      ['duotone', {}],
      ['color-blindness', {}],
      ['replace-color', { sourceColor: '#000000', targetColor: '#00ff00' }],
      ['watermark-text', { text: 'hi', fontSize: 12 }],
      ['text-overlay', { text: 'hi', fontSize: 12, background: '#00000080' }],
      ['image-enhancement', {}],
    ] as const) {
      const r = await runA(tool, [src], settings, {}, dir);
      assert.deepEqual(await channelsOf(r.kept!), { channels: 3, hasAlpha: false, format: 'png' }, `${tool} ${JSON.stringify(settings)}`);
    }
  });

  it('the border colour is where it was, and the photo inside', async () => {
    const src = `${dir}/blue.png`;
    await sharp({ create: { width: 10, height: 10, channels: 3, background: '#0000ff' } })
      .png()
      .toFile(src);
    const r = await runA('border', [src], { width: 2, color: '#ff0000' }, {}, dir);
    const { data, info } = await sharp(r.kept!).raw().toBuffer({ resolveWithObject: true });
    assert.equal(info.channels, 3);
    assert.deepEqual([...data.subarray(0, 3)], [255, 0, 0]);
    const mid = (7 * 14 + 7) * 3;
    assert.deepEqual([...data.subarray(mid, mid + 3)], [0, 0, 255]);
  });

  it('compose, stitch and collage of opaque pictures on an opaque background write no alpha', async () => {
    const a = await opaquePng('a.png');
    const b = await opaquePng('b.png');
    const over = await solid(dir, 'sticker.png', 8, 8, () => [255, 255, 0]);
    const runs: [string, string[], Record<string, unknown>, Record<string, string[]>][] = [
      ['compose', [a], { x: 2, y: 2 }, { overlay: [over] }],
      ['stitch', [a, b], { gap: 4 }, {}],
      ['collage', [a, b], { template: '2-h-equal', gap: 4, borderRadius: 6 }, {}],
    ];
    for (const [tool, files, settings, extra] of runs) {
      const r = await runA(tool, files, settings, extra, dir);
      assert.deepEqual(await channelsOf(r.kept!), { channels: 3, hasAlpha: false, format: 'png' }, tool);
    }
  });

  it('keeps the alpha channel where something is transparent', async () => {
    const src = await opaquePng();
    const rounded = await runA('border', [src], { width: 4, borderRadius: 10 }, {}, dir);
    const px = await sharp(rounded.kept!).raw().toBuffer({ resolveWithObject: true });
    assert.equal(px.info.channels, 4);
    assert.equal(px.data[3], 0, 'rounded corner is transparent');
    const clear = await runA('stitch', [src, src], { gap: 4, backgroundColor: 'transparent' }, {}, dir);
    assert.equal((await channelsOf(clear.kept!)).channels, 4, 'transparent gap');
    const holes = await solid(dir, 'holes.png', 10, 10, (x) => [0, 0, 255, x < 5 ? 0 : 255]);
    assert.equal((await channelsOf((await runA('vignette', [holes], {}, {}, dir)).kept!)).channels, 4, 'transparent input pixels');
    // An RGBA file, opaque or not, keeps its layout: only an alpha channel the tool added goes.
    const rgba = await solid(dir, 'rgba.png', 10, 10, () => [0, 0, 255, 255]);
    for (const [tool, settings] of [
      ['vignette', {}],
      ['border', { width: 2 }],
      ['watermark-text', { text: 'x' }],
    ] as const)
      assert.equal((await channelsOf((await runA(tool, [rgba], settings, {}, dir)).kept!)).channels, 4, `RGBA input, ${tool}`);
    const cut = await runA('replace-color', [src], { sourceColor: '#000000', makeTransparent: true, tolerance: 100 }, {}, dir);
    assert.equal((await channelsOf(cut.kept!)).channels, 4, 'made transparent');
  });
});
