/** Bit depth and greyscale: what the output format can hold is kept (grey stays one channel, 16 bits stay 16). */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { createWorkspace } from '../../../src/core/workspace.js';
import { writeImage } from '../../../src/engines/sharp.js';
import { getTool } from '../../../src/tools/index.js';
import { inputFile, runTool } from '../../../src/tools/run-tool.js';
import { tempDir } from '../../helpers/fixtures.js';

const dir = tempDir();

/** An 8×300 vertical grey ramp: 300 levels, at 16 bits most of them between two 8-bit values. */
async function greyRamp(name: string, bits: 8 | 16, format: 'png' | 'jpeg' = 'png'): Promise<string> {
  const p = path.join(dir, name);
  execFileSync('convert', ['-size', '8x300', 'gradient:black-white', '-depth', String(bits), '-define', 'png:color-type=0', p]);
  if (format === 'png') return p;
  await sharp(p).toColourspace('b-w').jpeg({ quality: 95 }).toFile(`${p}.jpg`);
  return `${p}.jpg`;
}

/** The samples of a grey image, 16 bits each. */
async function greySamples(file: string): Promise<Uint16Array> {
  const raw = await sharp(file).toColourspace('grey16').raw({ depth: 'ushort' }).toBuffer();
  return new Uint16Array(raw.buffer, raw.byteOffset, raw.length / 2);
}

async function run(
  tool: string,
  file: string | readonly string[],
  settings: Record<string, unknown>,
  extraFiles: Record<string, string> = {},
) {
  const ws = await createWorkspace();
  try {
    const files = await Promise.all([file].flat().map((f) => inputFile(f)));
    const extra = Object.fromEntries(await Promise.all(Object.entries(extraFiles).map(async ([k, f]) => [k, [await inputFile(f)]])));
    const out = await runTool(getTool(tool), { files, extra }, settings, { workDir: ws.dir, dataDir: dir });
    return {
      meta: await sharp(out.output!.path).metadata(),
      ushort: await greySamples(out.output!.path),
      warnings: (out.data?.warnings ?? []) as string[],
    };
  } finally {
    await ws.dispose();
  }
}

describe('bit depth and greyscale', () => {
  it('a 16-bit grey PNG stays 16-bit grey through rotate, resize, convert to TIFF and compress at quality 100', async () => {
    const src = await greyRamp('g16.png', 16);
    for (const [tool, settings] of [
      ['rotate', { angle: 180 }],
      ['resize', { width: 16 }],
      ['convert', { format: 'tiff' }],
      ['compress', { quality: 100 }],
    ] as const) {
      const { meta } = await run(tool, src, settings);
      assert.deepEqual([meta.space, meta.depth, meta.channels], ['grey16', 'ushort', 1], tool);
    }
    // compress at 100 is lossless: every 16-bit level is still there.
    const before = await greySamples(src);
    assert.ok(
      before.some((v) => v % 257 !== 0),
      'the fixture has levels 8 bits cannot hold',
    );
    assert.deepEqual((await run('compress', src, { quality: 100 })).ushort, before);
  });

  it('an 8-bit grey PNG or JPEG stays one channel', async () => {
    for (const src of [await greyRamp('g8.png', 8), await greyRamp('g8j.png', 8, 'jpeg')]) {
      const { meta } = await run('resize', src, { width: 16 });
      assert.deepEqual([meta.space, meta.channels], ['b-w', 1], src);
    }
  });

  it('a grey input the pipeline coloured is written in colour, at 16 bits', async () => {
    const out = path.join(dir, 'tinted.png');
    const red = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#ff0000' } })
      .png()
      .toBuffer();
    await writeImage(sharp(await greyRamp('g16-red.png', 16)).composite([{ input: red, left: 2, top: 2 }]), out, 'png');
    const meta = await sharp(out).metadata();
    assert.deepEqual([meta.space, meta.depth], ['rgb16', 'ushort']);
    assert.ok(meta.channels! >= 3, `${meta.channels} channels`);
  });

  it('a tool that draws at 8 bits names the loss of a 16-bit input; tools that keep 16 bits, and 8-bit inputs, get no warning', async () => {
    const g16 = await greyRamp('w16.png', 16);
    for (const [tool, file, settings] of [
      ['border', g16, { width: 2 }],
      ['vignette', g16, {}],
      ['stitch', [await greyRamp('w8.png', 8), g16], {}],
    ] as const) {
      const { meta, warnings } = await run(tool, file, settings);
      assert.equal(meta.depth, 'uchar', tool);
      assert.ok(
        warnings.some((w) => /w16\.png has 16 bits per channel; .+ with 8/.test(w)),
        `${tool}: ${JSON.stringify(warnings)}`,
      );
    }
    for (const [tool, file] of [
      ['resize', g16],
      ['border', await greyRamp('w8b.png', 8)],
    ] as const)
      assert.deepEqual((await run(tool, file, { width: 4 })).warnings, [], tool);
  });

  it('no depth warning for a chart or placeholder made from a 16-bit input, nor for a 16-bit overlay on an 8-bit photo', async () => {
    const g16 = await greyRamp('d16.png', 16);
    for (const [tool, settings] of [
      ['histogram', {}],
      ['lqip-placeholder', { format: 'png' }],
    ] as const)
      assert.deepEqual((await run(tool, g16, settings)).warnings, [], tool);
    const logo = await run('watermark-image', await greyRamp('base8.png', 8), {}, { watermark: g16 });
    assert.deepEqual(logo.warnings, []);
  });
});
