/**
 * A full disk (the run's temp directory or the output's) is the server's state, not the input's fault:
 * UNAVAILABLE (503, retry later), whatever the engine says and whatever failCode the tool gave exec().
 * /dev/full answers every write with ENOSPC, as a full disk does.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { exec } from '../../src/core/process.js';
import { inputFile, runTool } from '../../src/tools/run-tool.js';
import { tempDir } from '../helpers/fixtures.js';
import { testTool } from '../helpers/test-tool.js';

const unavailable = (e: { code?: string; message?: string }) => {
  assert.equal(e.code, 'UNAVAILABLE', e.message);
  assert.match(e.message!, /disk is full|No space left/i);
  return true;
};

describe('a full disk', () => {
  const dir = tempDir('kiln-disk-full-');

  it('is UNAVAILABLE when a program cannot write, not the failCode that blames the input', async () => {
    await assert.rejects(
      exec(
        'ffmpeg',
        ['-hide_banner', '-nostdin', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=d=0.2:s=64x48', '-f', 'mp4', '-y', '/dev/full'],
        {
          failCode: 'UNSUPPORTED_INPUT',
        },
      ),
      unavailable,
    );
  });

  it('is UNAVAILABLE when sharp cannot write a tool output', async () => {
    const tool = testTool('writes-to-full-disk', 'image/*', async (_ctx, inputs) => {
      await sharp(inputs.files[0]!.path).jpeg().toFile('/dev/full');
      return { outputs: [] };
    });
    const png = path.join(dir, 'fine.png');
    writeFileSync(
      png,
      await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
        .png()
        .toBuffer(),
    );
    await assert.rejects(
      runTool(tool as never, { files: [await inputFile(png)], extra: {} }, {}, { workDir: path.join(dir, 'w'), dataDir: dir }),
      unavailable,
    );
  });
});
