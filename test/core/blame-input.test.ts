/**
 * runTool's last check before it answers an internal failure: an image input that does not decode
 * completely takes the blame (UNSUPPORTED_INPUT, a 4xx), as libvips now and then reports a truncated
 * PNG as "Unknown error"; with an input that decodes, the failure stays INTERNAL.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { Tool } from '../../src/core/tool.js';
import { getTool } from '../../src/tools/index.js';
import { inputFile, runTool } from '../../src/tools/run-tool.js';
import { tempDir } from '../helpers/fixtures.js';
import { tiffBomb } from '../helpers/header-bombs.js';
import { testTool } from '../helpers/test-tool.js';

describe('an internal failure with an input that does not decode', () => {
  const dir = tempDir('kiln-blame-');
  // A tool that fails the way libvips did: a plain error saying nothing about the input.
  const failing = testTool('fails-unknown', 'image/*', async () => {
    throw new Error('Unknown error');
  });
  const run = async (file: string, tool: Tool = failing, settings = {}) =>
    runTool(tool, { files: [await inputFile(file)], extra: {} }, settings, {
      workDir: path.join(dir, `w-${path.basename(file)}-${tool === failing ? 'f' : 'r'}`),
      dataDir: dir,
    });

  it('is blamed on the input when the image is truncated, and stays internal when it decodes', async () => {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    const whole = path.join(dir, 'whole.png');
    const cut = path.join(dir, 'cut.png');
    writeFileSync(whole, png);
    writeFileSync(cut, png.subarray(0, Math.floor(png.length / 2)));
    await assert.rejects(run(cut), (e: { code?: string; message?: string }) => {
      assert.equal(e.code, 'UNSUPPORTED_INPUT');
      assert.match(e.message!, /cut\.png could not be decoded/);
      return true;
    });
    await assert.rejects(run(whole), (e: { code?: string }) => {
      assert.equal(e.code, 'INTERNAL');
      return true;
    });
  });

  // Found by the hostile corpus: libtiff reports strips that run past the end as a read *error*, not as a
  // truncation, so a check failing only on truncation let it decode (to black) and every image tool
  // answered 500 "tiff2vips: Read error at scanline …" (OCR: "Unknown error").
  it('is blamed on the input when a TIFF lists strips that run past the end of the file', async () => {
    const tif = path.join(dir, 'strips.tif');
    writeFileSync(tif, tiffBomb(64, 48).subarray(0, -32));
    for (const [tool, settings] of [
      [failing, {}],
      [getTool('resize'), { width: 16 }],
    ] as const)
      await assert.rejects(run(tif, tool, settings), (e: { code?: string; message?: string }) => {
        assert.equal(e.code, 'UNSUPPORTED_INPUT', e.message);
        assert.match(e.message!, /strips\.tif could not be decoded \(it is damaged or truncated\)/);
        return true;
      });
  });
});
