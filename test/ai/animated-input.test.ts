/**
 * An animated GIF given to an AI tool: every AI image tool works on one picture and writes one, so the
 * frames after the first are dropped. They were dropped without a word (blur-faces wrote a one-frame
 * GIF of a three-frame animation); like every other still-only tool they now say so in data.warnings.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import sharp from 'sharp';
import { dir, emptyData, run } from './inpaint-fixtures.js';
import { installForTest } from './install-helper.js';

const WARNING = (tool: string) => `anim.gif has 3 animation frames; ${tool} used the first only.`;

/** Three 48×32 frames, red, green, blue, each with a grey square so the classical steps have edges. */
async function animatedGif(): Promise<string> {
  const frames = await Promise.all(
    [
      { r: 220, g: 40, b: 40 },
      { r: 40, g: 200, b: 60 },
      { r: 40, g: 60, b: 220 },
    ].map((c) =>
      sharp({ create: { width: 48, height: 32, channels: 3, background: c } })
        .composite([{ input: { create: { width: 12, height: 12, channels: 3, background: '#808080' } }, left: 18, top: 10 }])
        .png()
        .toBuffer(),
    ),
  );
  const p = path.join(dir, 'anim.gif');
  await sharp(frames, { join: { animated: true } })
    .gif({ delay: [100, 100, 100], loop: 0 })
    .toFile(p);
  return p;
}

describe('AI tools given an animated GIF', () => {
  let gif: string;
  let faces: string;
  let upscale: string;
  before(async () => {
    gif = await animatedGif();
    faces = await installForTest('face-detection');
    upscale = await installForTest('upscale-enhance');
  });

  it('the tools that need no bundle say they used the first frame', async () => {
    for (const [tool, settings] of [
      ['restore-photo', {}],
      ['noise-removal', { tier: 'quick' }],
      ['image-enhancement', {}],
      ['colorize', { model: 'opencv' }],
      ['smart-crop', { mode: 'subject', width: 24, height: 24 }],
      ['content-aware-resize', { width: 40 }],
      ['ai-canvas-expand', { tier: 'fast', extendRight: 8 }],
      ['ocr', { quality: 'fast' }],
    ] as const) {
      const r = await run(tool, gif, settings, {}, emptyData);
      // restore-photo also says which of its model steps it skipped.
      assert.ok((r.data?.warnings as string[] | undefined)?.includes(WARNING(tool)), `${tool}: ${JSON.stringify(r.data?.warnings)}`);
    }
  });

  it('blur-faces and upscale (with their models) say so too, and write one frame', async () => {
    for (const [tool, settings, dataDir] of [
      ['blur-faces', {}, faces],
      ['upscale', { scale: 2, model: 'slim' }, upscale],
    ] as const) {
      const r = await run(tool, gif, settings, {}, dataDir);
      assert.deepEqual(r.data?.warnings, [WARNING(tool)], tool);
      assert.equal((await sharp(r.file!, { animated: true }).metadata()).pages ?? 1, 1, tool);
    }
  });

  it('a still picture gets no warning', async () => {
    const still = path.join(dir, 'still.png');
    await sharp({ create: { width: 24, height: 16, channels: 3, background: '#336699' } })
      .png()
      .toFile(still);
    assert.equal((await run('noise-removal', still, { tier: 'quick' })).data?.warnings, undefined);
  });
});
