/**
 * Animations that decode to far more pixels than their files hold are refused from their headers,
 * before any decoder runs: an APNG goes through ffmpeg (to WebP, for sharp), which has no pixel limit,
 * and a 140 KB one declaring 12000 × 12000 held it 90 s and 3 GB; 6000 one-pixel frames on a
 * 1500 × 1500 canvas were converted for 90 s. A small APNG still converts with every frame.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { KilnError } from '../../src/core/errors.js';
import { getTool } from '../../src/tools/index.js';
import { inputFile, runTool } from '../../src/tools/run-tool.js';
import { tempDir } from '../helpers/fixtures.js';
import { makeApng } from '../helpers/media.js';
import { apngBomb } from './corpus.js';

const dir = tempDir();

/** Runs in a work dir of its own under the suite's temp dir (removed with it), so outputs can be read after. */
async function run(tool: string, file: string, settings: Record<string, unknown>) {
  return runTool(getTool(tool), { files: [await inputFile(file)], extra: {} }, settings, { workDir: tempDir(), dataDir: dir });
}

describe('animation pixel bombs', () => {
  const bombs = [
    { label: '12000 × 12000, 2 frames', name: 'huge.apng', data: apngBomb(12000, 12000, 2) },
    { label: '1500 × 1500, 6000 frames', name: 'many.apng', data: apngBomb(1500, 1500, 6000) },
  ];
  for (const b of bombs) {
    for (const [tool, settings] of [
      ['convert', { format: 'webp' }],
      ['gif-tools', { action: 'reverse' }],
    ] as const) {
      it(`${tool} refuses an APNG of ${b.label} at once`, async () => {
        assert.ok(b.data.length < 500_000, `${b.data.length} bytes`);
        const p = path.join(dir, b.name);
        writeFileSync(p, b.data);
        const t0 = Date.now();
        await assert.rejects(run(tool, p, settings), (e: KilnError) => {
          assert.equal(e.code, 'LIMIT_EXCEEDED', e.message);
          assert.match(e.message, /decoded animation would be \d+×\d+ pixels × \d+ frames .*KILN_MAX_PIXELS/);
          return true;
        });
        assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
      });
    }
  }

  it('a small APNG still converts to an animated WebP with every frame', async () => {
    const src = makeApng(dir, 'ok.apng', { width: 32, height: 24, frames: 3, delayMs: 200, plays: 0 });
    const r = await run('convert', src, { format: 'webp' });
    const meta = await sharp(r.output!.path, { animated: true }).metadata();
    assert.equal(meta.pages, 3);
    assert.equal(meta.width, 32);
  });
});
