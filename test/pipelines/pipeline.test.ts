import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { PDFDocument } from '@cantoo/pdf-lib';
import { readdirSync, readFileSync } from 'node:fs';
import type { KilnError } from '../../src/core/errors.js';
import { createWorkspace } from '../../src/core/workspace.js';
import { pipelineTool, producedKind, runPipeline, validatePipeline } from '../../src/pipelines/pipeline.js';
import { TOOLS } from '../../src/tools/index.js';
import { inputFile, runTool } from '../../src/tools/run-tool.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';

const dir = tempDir();

async function run(raw: unknown, file: string) {
  const { steps } = validatePipeline(raw);
  const ws = await createWorkspace();
  const progress: number[] = [];
  try {
    const out = await runPipeline(steps, [await inputFile(file)], {
      workDir: ws.dir,
      dataDir: dir,
      outDir: ws.dir,
      onProgress: (p) => progress.push(p),
    });
    return { buf: readFileSync(out.output!.path), name: out.output!.name, progress, data: out.data };
  } finally {
    await ws.dispose();
  }
}

describe('pipelines', () => {
  it('validates every step before running and names the failing step', () => {
    assert.throws(
      () => validatePipeline({ steps: [] }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
    assert.throws(
      () => validatePipeline({ steps: [{ tool: 'resize', settings: { width: 10 } }, { tool: 'nope' }] }),
      (e: KilnError) => /step 2 \(nope\)/.test(e.message),
    );
    assert.throws(
      () =>
        validatePipeline({
          steps: [
            { tool: 'resize', settings: { width: 10 } },
            { tool: 'rotate', settings: {} },
            { tool: 'resize', settings: { width: -1 } },
          ],
        }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /step 3 \(resize\)/.test(e.message),
    );
  });

  it('refuses a step whose input type does not fit the previous output', () => {
    assert.throws(
      () =>
        validatePipeline({
          steps: [
            { tool: 'resize', settings: { width: 10 } },
            { tool: 'rotate-pdf', settings: {} },
          ],
        }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /step 2 \(rotate-pdf\).*\.pdf.*step 1 produces image/.test(e.message),
    );
  });

  it('refuses a several-file tool after the first step: it would get one file', () => {
    // compress-pdf → merge-pdf used to "merge" the one compressed PDF and answer 200.
    assert.throws(
      () => validatePipeline({ steps: [{ tool: 'compress-pdf' }, { tool: 'merge-pdf' }] }),
      (e: KilnError) =>
        e.code === 'VALIDATION_ERROR' &&
        /step 2 \(merge-pdf\).*at least 2 files/.test(e.message) &&
        JSON.stringify(e.details).includes('steps.1.tool'),
    );
    // First, it gets every input; a later tool that takes one file or more is fine.
    assert.doesNotThrow(() => validatePipeline({ steps: [{ tool: 'merge-pdf' }, { tool: 'compress-pdf' }] }));
  });

  it('runs three image steps in order with step progress', async () => {
    const src = await makeImage(dir, 'p.jpg', 400, 200);
    const r = await run(
      {
        name: 'thumbs',
        steps: [
          { tool: 'resize', settings: { width: 200 } },
          { tool: 'convert', settings: { format: 'webp' } },
          { tool: 'rotate', settings: { angle: 90 } },
        ],
      },
      src,
    );
    const m = await sharp(r.buf).metadata();
    assert.deepEqual([m.format, m.width, m.height], ['webp', 100, 200]);
    assert.ok(r.progress.length > 3 && r.progress.at(-1)! >= 99);
    for (let i = 1; i < r.progress.length; i++) assert.ok(r.progress[i]! >= r.progress[i - 1]! - 0.001, 'progress never goes back');
  });

  it("keeps every step's warnings, named by step (only the last step's data was the result)", async () => {
    const frames = await Promise.all(
      [0, 1].map((i) =>
        sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 200 * i, g: 0, b: 0 } } })
          .png()
          .toBuffer(),
      ),
    );
    const gif = `${dir}/two-frames.gif`;
    await sharp(frames, { join: { animated: true } })
      .gif()
      .toFile(gif);
    const r = await run(
      {
        name: 'soft',
        steps: [
          { tool: 'sharpening', settings: {} },
          { tool: 'resize', settings: { width: 4 } },
        ],
      },
      gif,
    );
    assert.deepEqual(r.data?.warnings, ['step 1/2 (sharpening): two-frames.gif has 2 animation frames; sharpening used the first only.']);
  });
  it('mixes an image step and a PDF step (image-to-pdf then rotate-pdf)', async () => {
    const src = await makeImage(dir, 'scan.png', 300, 400);
    const r = await run(
      {
        steps: [
          { tool: 'image-to-pdf', settings: {} },
          { tool: 'rotate-pdf', settings: { angle: 90 } },
        ],
      },
      src,
    );
    const pdf = await PDFDocument.load(r.buf);
    assert.equal(pdf.getPageCount(), 1);
    assert.equal(pdf.getPage(0).getRotation().angle, 90);
  });

  it('accepts preset ids as steps', async () => {
    const src = await makeImage(dir, 'q.jpg', 64, 32);
    const r = await run(
      {
        steps: [
          { tool: 'jpg-to-png', settings: {} },
          { tool: 'resize', settings: { width: 32 } },
        ],
      },
      src,
    );
    const m = await sharp(r.buf).metadata();
    assert.deepEqual([m.format, m.width], ['png', 32]);
  });

  it('knows a tool that always writes PNG makes PNG for the next step, whatever it was given', async () => {
    // circle-crop → jpg-to-webp on a JPEG passed validation, cropped, then failed on a-circle.png (exit 3).
    assert.throws(
      () => validatePipeline({ steps: [{ tool: 'circle-crop' }, { tool: 'jpg-to-webp' }] }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /step 2 \(jpg-to-webp\).*step 1 produces png/.test(e.message),
    );
    const r = await run({ steps: [{ tool: 'circle-crop' }, { tool: 'png-to-webp' }] }, await makeImage(dir, 'round.jpg', 40, 40));
    const m = await sharp(r.buf).metadata();
    assert.deepEqual([m.format, m.width, m.hasAlpha], ['webp', 40, true]);
  });

  it('knows a tool that answers JSON makes no image for the next step (ocr, color-palette)', () => {
    // ocr → resize used to pass validation, run the whole OCR, then fail with resize refusing a.json.
    assert.throws(
      () => validatePipeline({ steps: [{ tool: 'ocr' }, { tool: 'resize', settings: { width: 10 } }] }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /step 2 \(resize\).*step 1 produces json/.test(e.message),
    );
    // color-palette's format is a colour notation: JSON by default, its PNG strip with swatch.
    assert.throws(
      () => validatePipeline({ steps: [{ tool: 'color-palette' }, { tool: 'resize', settings: { width: 10 } }] }),
      (e: KilnError) => /step 1 produces json/.test(e.message),
    );
    assert.doesNotThrow(() => validatePipeline({ steps: [{ tool: 'color-palette', settings: { swatch: true } }, { tool: 'png-to-jpg' }] }));
    // Every tool that declares a JSON answer is known to make one.
    for (const tool of TOOLS.filter((t) => /^JSON\b/.test(t.output) && t.input.kind !== 'none'))
      assert.equal(producedKind(tool, tool.settings.parse({}), undefined)?.ext, 'json', tool.id);
  });

  it('knows what passport-photo, gif-tools and gif-webp make before running them', () => {
    const refused = (steps: unknown[], re: RegExp) =>
      assert.throws(
        () => validatePipeline({ steps }),
        (e: KilnError) => e.code === 'VALIDATION_ERROR' && re.test(e.message),
      );
    // A print sheet is a second file: the answer is a ZIP, which resize cannot take.
    refused(
      [
        { tool: 'passport-photo', settings: { countryCode: 'US', printLayout: 'a4' } },
        { tool: 'resize', settings: { width: 10 } },
      ],
      /step 2 \(resize\).*step 1 produces zip/,
    );
    // Without one it is always a JPEG, whatever it was given.
    refused([{ tool: 'passport-photo', settings: { countryCode: 'US' } }, { tool: 'png-to-webp' }], /step 1 produces jpg/);
    refused(
      [
        { tool: 'gif-tools', settings: { action: 'extract-frames', extractMode: 'all' } },
        { tool: 'resize', settings: { width: 10 } },
      ],
      /step 1 produces zip/,
    );
    assert.doesNotThrow(() =>
      validatePipeline({
        steps: [
          { tool: 'gif-tools', settings: { action: 'extract-frames' } },
          { tool: 'resize', settings: { width: 10 } },
        ],
      }),
    );
    // gif-tools writes a GIF; gif-webp turns that into an animated WebP, which gif-to-video does not take.
    refused(
      [{ tool: 'gif-tools', settings: { action: 'reverse' } }, { tool: 'gif-webp' }, { tool: 'gif-to-video' }],
      /step 2 produces webp/,
    );
    const { steps } = validatePipeline({ steps: [{ tool: 'gif-webp' }] });
    const gifWebp = steps[0]!.tool;
    const kind = (ext: string) => ({ ext, mime: `image/${ext}`, text: false });
    assert.equal(producedKind(gifWebp, {}, kind('webp'))?.ext, 'gif');
    assert.equal(producedKind(gifWebp, {}, kind('gif'))?.ext, 'webp');
  });

  it('knows a preset makes its own output type: jpg-to-pdf then rotate-pdf', async () => {
    const { steps } = validatePipeline({ steps: [{ tool: 'jpg-to-pdf' }, { tool: 'rotate-pdf', settings: { angle: 180 } }] });
    assert.equal(steps[0]!.tool.output, 'PDF');
    assert.equal(producedKind(steps[0]!.tool, {}, undefined)?.ext, 'pdf');
    // A preset of a format-choosing tool makes its fixed format, not the base tool's default.
    const pdfToJpg = validatePipeline({ steps: [{ tool: 'pdf-to-jpg', settings: { pages: '1' } }] }).steps[0]!;
    assert.equal(producedKind(pdfToJpg.tool, pdfToJpg.settings, undefined)?.ext, 'jpg');
    assert.throws(
      () => validatePipeline({ steps: [{ tool: 'jpg-to-pdf' }, { tool: 'resize', settings: { width: 10 } }] }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /step 2 \(resize\).*step 1 produces pdf/.test(e.message),
    );
    const src = await makeImage(dir, 'scan.jpg', 300, 400);
    const r = await run({ steps: [{ tool: 'jpg-to-pdf' }, { tool: 'rotate-pdf', settings: { angle: 180 } }] }, src);
    const pdf = await PDFDocument.load(r.buf);
    assert.equal(pdf.getPageCount(), 1);
    assert.equal(pdf.getPage(0).getRotation().angle, 180);
    assert.match(r.name, /\.pdf$/);
  });

  it('refuses a later step whose feature bundle is not installed before the first step runs', async () => {
    const src = await makeImage(dir, 'needs.png', 40, 20, { format: 'png' });
    const { steps } = validatePipeline({
      steps: [
        { tool: 'resize', settings: { width: 20 } },
        { tool: 'remove-background', settings: {} },
      ],
    });
    // A data dir with no bundle installed.
    const empty = tempDir('kiln-no-bundles-');
    const ws = await createWorkspace();
    const stages: string[] = [];
    try {
      await assert.rejects(
        runTool(
          pipelineTool(steps, 'cutout'),
          { files: [await inputFile(src)], extra: {} },
          {},
          {
            workDir: ws.dir,
            dataDir: empty,
            onProgress: (_p, stage) => stages.push(stage ?? ''),
          },
        ),
        (e: KilnError) => e.code === 'FEATURE_NOT_INSTALLED' && /^step 2\/2 \(remove-background\): /.test(e.message),
      );
      // Step 1 never started: no stage reported, no workspace made for it.
      assert.deepEqual(
        stages.filter((st) => st.startsWith('step 1')),
        [],
      );
      assert.deepEqual(
        readdirSync(ws.dir).filter((n) => n.startsWith('step')),
        [],
      );
    } finally {
      await ws.dispose();
    }
  });
});
