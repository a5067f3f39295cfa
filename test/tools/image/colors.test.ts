/**
 * Colour settings in the spellings users of CSS and ImageMagick type: hex without `#` (a `#` starts a
 * shell comment), rgb()/rgba(), hsl()/hsla(), `none`. They were refused as "must be a colour" everywhere;
 * anything else is still refused with a message that lists what is accepted.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { isColor, parseColor } from '../../../src/tools/_shared/color.js';
import { kiln } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/fixtures.js';
import { readZip } from '../../helpers/zip.js';
import { runA, solid } from './a-helpers.js';

const dir = tempDir();

describe('colour spellings', () => {
  it('parses hex with and without #, rgb(), rgba(), hsl(), hsla(), names and none', () => {
    for (const [spelling, want] of [
      ['ff0000', [255, 0, 0, 1]],
      ['FFF', [255, 255, 255, 1]],
      ['00ff0080', [0, 255, 0, 128 / 255]],
      ['#0000ff', [0, 0, 255, 1]],
      ['rgb(255,128,0)', [255, 128, 0, 1]],
      ['rgb(255 128 0 / 50%)', [255, 128, 0, 0.5]],
      ['RGBA(0, 0, 255, 0.25)', [0, 0, 255, 0.25]],
      ['rgb(100%, 50%, 0%)', [255, 128, 0, 1]],
      ['hsl(120, 100%, 50%)', [0, 255, 0, 1]],
      ['hsl(240deg 100% 25% / .5)', [0, 0, 128, 0.5]],
      ['hsla(0.5turn, 100%, 50%, 1)', [0, 255, 255, 1]],
      ['hsl(0, 0%, 100%)', [255, 255, 255, 1]],
      ['rebeccapurple', [102, 51, 153, 1]],
      ['none', [0, 0, 0, 0]],
    ] as const) {
      const c = parseColor(spelling);
      assert.deepEqual([c.r, c.g, c.b, c.alpha], want, spelling);
    }
  });

  it('refuses what is not a colour', () => {
    for (const bad of [
      'rgb(256,0,0)',
      'rgb(1,2)',
      'rgba(1,2,3,4,5)',
      'rgb(1 2 3 / 1 / 1)',
      'rgb(1, 2, 3 / 1)',
      'rgba(0,0,0,2)',
      'hsl(0,100,50)',
      'hsl(x,1%,1%)',
      'gg0000',
      '#12345',
      'ff00000',
      'rgb()',
      'redd',
    ])
      assert.equal(isColor(bad), false, bad);
  });

  it('border paints rgb(), hsl() and bare hex colours', async () => {
    const src = await solid(dir, 'blue.png', 20, 10, () => [0, 0, 255]);
    for (const [color, want] of [
      ['ff0000', [255, 0, 0]],
      ['rgb(0 128 0)', [0, 128, 0]],
      ['hsl(60, 100%, 50%)', [255, 255, 0]],
    ] as const) {
      const r = await runA('border', [src], { width: 3, color }, {}, dir);
      const { data } = await sharp(r.kept!).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      assert.deepEqual([...data.subarray(0, 3)], want, color);
    }
  });

  it('a bad colour is a VALIDATION_ERROR naming the spellings, over the CLI exit 2', async () => {
    const src = await solid(dir, 'b2.png', 8, 8, () => [0, 0, 255]);
    await assert.rejects(runA('vignette', [src], { color: 'rgb(300,0,0)' }), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'VALIDATION_ERROR');
      assert.match(e.message, /color.*rgb\(255, 0, 0\).*hsl\(/);
      return true;
    });
    const out = path.join(dir, 'cli.png');
    const ok = await kiln(['border', src, '--width', '2', '--color', '00ff00', '-o', out]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual([...(await sharp(out).raw().toBuffer()).subarray(0, 3)], [0, 255, 0]);
    const bad = await kiln(['border', src, '--color', 'hsl(0,100,50)', '-o', out]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--color must be a colour: .*rgb\(/);
  });

  it("watermark-text honours the colour's alpha: a fully transparent colour leaves the photo as it was", async () => {
    const src = await solid(dir, 'grey.png', 60, 40, () => [128, 128, 128]);
    const pixels = async (color: string) => {
      const r = await runA('watermark-text', [src], { text: 'MARK', fontSize: 20, opacity: 100, color }, {}, dir);
      return sharp(r.kept!).removeAlpha().raw().toBuffer();
    };
    const before = await sharp(src).removeAlpha().raw().toBuffer();
    assert.deepEqual(await pixels('rgba(0, 0, 0, 0)'), before);
    assert.notDeepEqual(await pixels('rgb(0, 0, 0)'), before);
  });

  it('text-overlay with background none draws no box and adds no padding, as when it is omitted', async () => {
    const src = await solid(dir, 'dark.png', 80, 40, () => [20, 40, 60]);
    const pixels = async (extra: Record<string, unknown>) => {
      const r = await runA('text-overlay', [src], { text: 'Hi', fontSize: 16, x: 4, y: 4, padding: 12, ...extra }, {}, dir);
      return sharp(r.kept!).raw().toBuffer();
    };
    const plain = await pixels({});
    assert.deepEqual(await pixels({ background: 'none' }), plain);
    assert.notDeepEqual(await pixels({ background: 'rgba(255, 255, 255, 0.5)' }), plain);
  });

  it('favicon writes the manifest colour as #rrggbb whatever the spelling', async () => {
    const src = await solid(dir, 'logo.png', 32, 32, () => [200, 30, 30]);
    for (const [backgroundColor, want] of [
      ['rgb(255, 0, 0)', '#ff0000'],
      ['transparent', '#ffffff'],
    ] as const) {
      const r = await runA('favicon', [src], { backgroundColor }, {}, dir);
      const manifest = JSON.parse((await readZip(r.kept!)).get('site.webmanifest')!.toString());
      assert.deepEqual([manifest.theme_color, manifest.background_color], [want, want], backgroundColor);
    }
  });
});
