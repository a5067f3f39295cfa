/**
 * Several pictures in one file (animated GIF/APNG, multi-page TIFF): tools that keep them keep every
 * frame; still-only tools use the first and say so in data.warnings (CLI: `kiln: FILE: warning: …`).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { createWorkspace } from '../../../src/core/workspace.js';
import { getTool } from '../../../src/tools/index.js';
import { findPreset, presetTool } from '../../../src/tools/presets.js';
import { inputFile, runTool } from '../../../src/tools/run-tool.js';
import { apngFrames } from '../../../src/tools/image/_shared/frames.js';
import { kiln } from '../../helpers/cli.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { makeApng } from '../../helpers/media.js';

const dir = tempDir();
const COLOURS = [
  { r: 255, g: 0, b: 0 },
  { r: 0, g: 255, b: 0 },
  { r: 0, g: 0, b: 255 },
];

/** Three 24×16 frames, red, green, blue, 200 ms each. */
async function animatedGif(): Promise<string> {
  const frames = await Promise.all(
    COLOURS.map((c) =>
      sharp({ create: { width: 24, height: 16, channels: 4, background: { ...c, alpha: 1 } } })
        .png()
        .toBuffer(),
    ),
  );
  const p = path.join(dir, 'anim.gif');
  await sharp(frames, { join: { animated: true } })
    .gif({ delay: [200, 200, 200], loop: 0 })
    .toFile(p);
  return p;
}

function apng(): string {
  return makeApng(dir, 'anim.apng', { width: 32, height: 24, frames: 3, delayMs: 200, plays: 0 });
}

function multiPageTiff(): string {
  const p = path.join(dir, 'pages.tiff');
  execFileSync('convert', ['-size', '20x10', 'xc:red', 'xc:green', 'xc:blue', '-depth', '8', p]);
  return p;
}

/** A tool, or a preset as the CLI and the daemon build it (presetTool of its base tool). */
function toolOrPreset(id: string) {
  const preset = findPreset(id);
  return preset ? presetTool(preset, getTool(preset.tool)) : getTool(id);
}

async function run(tool: string, file: string, settings: Record<string, unknown>) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(toolOrPreset(tool), { files: [await inputFile(file)], extra: {} }, settings, {
      workDir: ws.dir,
      dataDir: dir,
    });
    const meta = await sharp(out.output!.path, { animated: true }).metadata();
    return { warnings: out.data?.warnings as string[] | undefined, pages: meta.pages ?? 1, delay: meta.delay, meta };
  } finally {
    await ws.dispose();
  }
}

describe('animations and pages', () => {
  it('a still-only tool given an animated GIF says it used the first frame', async () => {
    const gif = await animatedGif();
    for (const [tool, settings] of [
      ['sharpening', {}],
      ['border', { width: 2 }],
      ['adjust-colors', { brightness: 10 }],
    ] as const) {
      const r = await run(tool, gif, settings);
      assert.deepEqual(r.warnings, [`anim.gif has 3 animation frames; ${tool} used the first only.`], tool);
    }
  });

  it('resize keeps every frame of an animated GIF and warns of nothing', async () => {
    const r = await run('resize', await animatedGif(), { width: 12 });
    assert.equal(r.pages, 3);
    assert.equal(r.warnings, undefined);
  });

  it('a multi-page TIFF: resize, crop and compress keep every page; convert to PNG says it used the first', async () => {
    const tiff = multiPageTiff();
    for (const [tool, settings] of [
      ['resize', { width: 10 }],
      ['crop', { left: 0, top: 0, width: 8, height: 5 }],
      ['compress', { quality: 50 }],
    ] as const) {
      const r = await run(tool, tiff, settings);
      assert.equal(r.pages, 3, tool);
      assert.equal(r.warnings, undefined, tool);
    }
    assert.deepEqual((await run('convert', tiff, { format: 'png' })).warnings, ['pages.tiff has 3 pages; convert used the first only.']);
  });

  it('a TIFF whose pages differ in size: resize uses the first and says so', async () => {
    const p = path.join(dir, 'mixed.tiff');
    execFileSync('convert', ['-size', '20x10', 'xc:red', '-size', '10x6', 'xc:green', p]);
    const r = await run('resize', p, { width: 10 });
    assert.deepEqual([r.pages, r.meta.width, r.meta.height], [1, 10, 5]);
    assert.deepEqual(r.warnings, ['mixed.tiff has 2 pages; resize used the first only.']);
  });

  it('strip-metadata keeps every page of a TIFF (ExifTool) and does not warn', async () => {
    const r = await run('strip-metadata', multiPageTiff(), {});
    assert.equal(r.pages, 3);
    assert.equal(r.warnings, undefined);
  });

  it('an APNG stays animated when converted to GIF or WebP', async () => {
    const src = apng();
    for (const format of ['gif', 'webp']) {
      const r = await run('convert', src, { format });
      assert.equal(r.pages, 3, format);
      assert.deepEqual(r.delay, [200, 200, 200], format);
      assert.equal(r.warnings, undefined);
    }
    const web = await run('optimize-for-web', src, { format: 'webp' });
    assert.equal(web.pages, 3);
  });

  it('a preset decides with its fixed format and names itself: webp-to-gif keeps the frames, gif-to-jpg says it used the first', async () => {
    const gif = await animatedGif();
    const webp = path.join(dir, 'anim.webp');
    await sharp(gif, { animated: true }).webp({ lossless: true }).toFile(webp);
    const r = await run('webp-to-gif', webp, {});
    assert.equal(r.pages, 3);
    assert.equal(r.warnings, undefined);
    assert.deepEqual((await run('gif-to-jpg', gif, {})).warnings, ['anim.gif has 3 animation frames; gif-to-jpg used the first only.']);
  });

  it('strip-metadata that must re-encode a multi-page TIFF (EXIF rotation) says it kept the first page', async () => {
    const p = path.join(dir, 'turned.tiff');
    execFileSync('convert', ['-size', '20x10', 'xc:red', 'xc:green', '-orient', 'right-top', '-depth', '8', p]);
    const r = await run('strip-metadata', p, {});
    assert.deepEqual(r.warnings, ['turned.tiff has 2 pages; strip-metadata used the first only.']);
    assert.deepEqual([r.pages, r.meta.width, r.meta.height], [1, 10, 20]);
  });

  it('an APNG into a still PNG (resize, crop) is said to lose its frames', async () => {
    const src = apng();
    assert.deepEqual((await run('resize', src, { width: 16 })).warnings, ['anim.apng has 3 animation frames; resize used the first only.']);
    assert.deepEqual((await run('crop', src, { left: 0, top: 0, width: 8, height: 8 })).warnings, [
      'anim.apng has 3 animation frames; crop used the first only.',
    ]);
  });

  it('image-to-pdf says an animated GIF became one page', async () => {
    const gif = await animatedGif();
    const ws = await createWorkspace();
    try {
      const out = await runTool(
        getTool('image-to-pdf'),
        { files: [await inputFile(gif)], extra: {} },
        {},
        { workDir: ws.dir, dataDir: dir },
      );
      assert.equal(out.data?.pages, 1);
      assert.deepEqual(out.data?.warnings, ['anim.gif has 3 animation frames; image-to-pdf used the first only.']);
    } finally {
      await ws.dispose();
    }
  });

  it('stitch, barcode-read, histogram and an animated watermark logo say they used the first frame too', async () => {
    const gif = await animatedGif();
    const png = await makeImage(dir, 'still2.png', 24, 16);
    const warnings = async (tool: string, files: string[], settings: Record<string, unknown>, extra: Record<string, string> = {}) => {
      const ws = await createWorkspace();
      try {
        const ex = Object.fromEntries(await Promise.all(Object.entries(extra).map(async ([k, f]) => [k, [await inputFile(f)]])));
        const out = await runTool(getTool(tool), { files: await Promise.all(files.map((f) => inputFile(f))), extra: ex }, settings, {
          workDir: ws.dir,
          dataDir: dir,
        });
        return out.data?.warnings;
      } finally {
        await ws.dispose();
      }
    };
    const first = (tool: string) => [`anim.gif has 3 animation frames; ${tool} used the first only.`];
    assert.deepEqual(await warnings('stitch', [png, gif], {}), first('stitch'));
    assert.deepEqual(await warnings('barcode-read', [gif], {}), first('barcode-read'));
    assert.deepEqual(await warnings('histogram', [gif], {}), first('histogram'));
    assert.deepEqual(await warnings('watermark-image', [png], {}, { watermark: gif }), first('watermark-image'));
    assert.deepEqual(await warnings('qr-generate', [], { data: 'kiln' }, { logo: gif }), first('qr-generate'));
  });

  it('a single picture gets no warnings', async () => {
    const png = await makeImage(dir, 'still.png', 20, 10);
    assert.equal((await run('sharpening', png, {})).warnings, undefined);
    assert.equal(apngFrames(Buffer.alloc(0)), 1);
  });

  it('the CLI prints the warning on stderr and still writes the output', async () => {
    const gif = await animatedGif();
    const out = path.join(dir, 'cli-out.gif');
    const r = await kiln(['vignette', gif, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /kiln: .*anim\.gif: warning: anim\.gif has 3 animation frames; vignette used the first only\./);
    assert.equal((await sharp(out).metadata()).width, 24);
  });
});
