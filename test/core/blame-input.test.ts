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
import { inputFile, runTool } from '../../src/tools/run-tool.js';
import { tempDir } from '../helpers/fixtures.js';
import { testTool } from '../helpers/test-tool.js';

describe('an internal failure with an input that does not decode', () => {
  const dir = tempDir('kiln-blame-');
  // A tool that fails the way libvips did: a plain error saying nothing about the input.
  const failing = testTool('fails-unknown', 'image/*', async () => {
    throw new Error('Unknown error');
  });
  const run = async (file: string) =>
    runTool(
      failing as never,
      { files: [await inputFile(file)], extra: {} },
      {},
      { workDir: path.join(dir, `w-${path.basename(file)}`), dataDir: dir },
    );

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
});
